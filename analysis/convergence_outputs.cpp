#include "analysis/convergence_outputs.hpp"

#include "scenario/run_plan.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ddlsim::analysis {
namespace {

models::convergence::CoSimulation make(const sim::Scenario& s) {
  const auto& c = *s.training.convergence;
  models::convergence::Compression compression = c.compression;
  for (const auto& b : s.plan->training.buckets) compression.bucket_bytes.push_back(b.bytes);
  compression.roots = s.plan->training.roots;  // artopk's selecting worker per iteration
  return {c.data, c.settings, c.rule, s.platform.workers, s.workload.batch_size, s.seed, compression};
}

nlohmann::json point_json(const std::optional<models::convergence::Point>& p, bool noise) {
  if (!p) return nullptr;
  nlohmann::json j{{"iteration", p->iteration},     {"time_s", p->time_s},       {"epochs", p->epochs},
                   {"train_loss", p->train_loss}, {"test_loss", p->test_loss}, {"test_accuracy", p->test_accuracy}};
  if (noise)
    j["gradient_noise_scale"] = std::isfinite(p->gradient_noise_scale) ? nlohmann::json(p->gradient_noise_scale) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

double last_end_s(const std::vector<sim::IterationRecord>& records) {
  double end = 0;
  for (const auto& r : records) end = std::max(end, r.end_s);
  return end;
}

ConvergenceOutputs::ConvergenceOutputs(const sim::Scenario& scenario, std::function<std::ofstream&()> open)
    : scenario_(scenario), open_(std::move(open)), sim_(make(scenario)) {
  open_() << "iteration,time_s,epochs,train_loss,test_loss,test_accuracy"
          << (scenario.training.convergence->settings.noise_scale ? ",gradient_noise_scale\n" : "\n");
  const auto& c = *scenario.training.convergence;
  // A relaxed model or a compressor: dense bsp on the same data is the baseline.
  if (c.settings.bsp_baseline &&
      (c.rule.kind != models::convergence::Rule::Kind::BSP || c.compression.kind != models::convergence::Compression::Kind::NONE))
    bsp_.emplace(c.data, c.settings, models::convergence::Rule{}, scenario.platform.workers, scenario.workload.batch_size,
                 scenario.seed);
  if (scenario.training.adaptive.live_gain) live_.emplace();
  if (c.rule.kind == models::convergence::Rule::Kind::PEER)  // driven by the worker loops as the run goes
    peer_ = std::make_unique<models::convergence::PeerTraining>(sim_, scenario.platform.workers, scenario.workload.iterations,
                                                                [this](const models::convergence::Point& p) { add(p); });
}

void ConvergenceOutputs::explore(int k, double end_s, const sim::IterationCompression& row, bool last) {
  // Seed 002 explores each candidate from a checkpoint with a new compressor, then restores it:
  // the explored iterations cost time and measure gains, and the training makes no progress.
  if (!checkpoint_) checkpoint_ = sim_.snapshot();
  if (row.variant != exploring_candidate_) {
    sim_.restore(*checkpoint_);
    sim_.clear_compression_memory();
    exploring_candidate_ = row.variant;
  }
  sim_.set_compression_ratio(row.cr);
  sim_.step(k);
  live_->record(k, sim_.compression_gain());
  if (last) {  // the run ends exploring: the training's model is the checkpoint's
    sim_.restore(*checkpoint_);
    add(sim_.evaluate_now(k, end_s));
  }
}

void ConvergenceOutputs::iteration(int k, double end_s, const sim::IterationCompression& row) {
  const bool last = k + 1 == scenario_.workload.iterations;
  if (bsp_ && !bsp_reached_)  // until it reaches the target: its iterations to it are all it gives
    if (const auto p = bsp_->iteration(k, end_s, last);
        p && p->test_accuracy >= scenario_.training.convergence->settings.target_accuracy)
      bsp_reached_ = p;
  if (scenario_.training.convergence->rule.kind == models::convergence::Rule::Kind::ASYNC) {
    if (++since_eval_ >= scenario_.training.convergence->settings.evaluate_every_iterations || last) {
      async_evaluations_.push_back({k, end_s});
      since_eval_ = 0;
    }
    return;
  }
  if (peer_) return;  // its points come from the worker loops (peer_training.hpp)
  if (live_ && row.exploring) return explore(k, end_s, row, last);
  if (checkpoint_) {  // the exploration is over: back to the checkpoint, then train at the chosen ratio
    sim_.restore(*checkpoint_);
    checkpoint_.reset();
    exploring_candidate_ = -1;
  }
  if (live_) sim_.set_compression_ratio(row.cr);
  const auto p = sim_.iteration(k, end_s, last);
  if (live_) live_->record(k, sim_.compression_gain());
  if (p) add(*p);
}

void ConvergenceOutputs::finish(const sim::SimulationResult& result) {
  if (scenario_.training.convergence->rule.kind != models::convergence::Rule::Kind::ASYNC) return;
  for (const auto& p : models::convergence::replay_updates(sim_, result.updates, result.bucket_bytes,
                                                           scenario_.platform.parameter_servers, async_evaluations_))
    add(p);
}

void ConvergenceOutputs::add(const models::convergence::Point& point) {
  const std::optional<models::convergence::Point> p = point;
  ++evaluations_;
  open_() << fmt::format("{},{:.9f},{:.6f},{:.6f},{:.6f},{:.6f}", p->iteration, p->time_s, p->epochs, p->train_loss,
                         p->test_loss, p->test_accuracy);
  if (scenario_.training.convergence->settings.noise_scale)
    open_() << (std::isfinite(p->gradient_noise_scale) ? fmt::format(",{:.6g}", p->gradient_noise_scale) : std::string(","));
  open_() << "\n";
  last_ = p;
  if (!best_ || p->test_accuracy > best_->test_accuracy) best_ = p;
  if (!reached_ && p->test_accuracy >= scenario_.training.convergence->settings.target_accuracy) reached_ = p;
}

nlohmann::json ConvergenceOutputs::summary() const {
  const auto& c = *scenario_.training.convergence;
  const auto& d = *c.data;
  nlohmann::json j;
  j["basis"] = "co-simulated";
  j["dataset"] = d.name;
  j["train_samples"] = d.train_size();
  j["test_samples"] = d.test_size();
  j["model"] = sim_.classifier().describe();
  j["parameters"] = sim_.classifier().parameters();
  j["learning_rate"] = c.settings.learning_rate;
  j["shards"] = c.settings.shards == models::convergence::Shards::IID ? "iid" : "by_label";
  j["batch_per_worker"] = scenario_.workload.batch_size;
  j["evaluations"] = evaluations_;
  j["target_accuracy"] = c.settings.target_accuracy;
  j["reached_target"] = reached_.has_value();
  j["time_to_target_s"] = reached_ ? nlohmann::json(reached_->time_s) : nlohmann::json(nullptr);
  j["iterations_to_target"] = reached_ ? nlohmann::json(reached_->iteration + 1) : nlohmann::json(nullptr);
  j["epochs_to_target"] = reached_ ? nlohmann::json(reached_->epochs) : nlohmann::json(nullptr);
  const bool noise = c.settings.noise_scale;
  j["final"] = point_json(last_, noise);
  j["best"] = point_json(best_, noise);
  if (noise)
    j["gradient_noise_scale"] = {
        {"basis", "B_simple = tr(Sigma) / |G|^2 (McCandlish et al. 2018, Appendix A.1), estimated from the workers' "
                  "batch gradients and their mean at every iteration, averaged between evaluations"},
        {"at_target", reached_ && std::isfinite(reached_->gradient_noise_scale) ? nlohmann::json(reached_->gradient_noise_scale)
                                                                                : nlohmann::json(nullptr)},
        {"final", last_ && std::isfinite(last_->gradient_noise_scale) ? nlohmann::json(last_->gradient_noise_scale)
                                                                       : nlohmann::json(nullptr)}};
  if (bsp_) {
    // Pollux's statistical efficiency (Qiao et al., OSDI 2021): the progress a sample makes here
    // relative to bsp's, measured as the training samples each needs to the target.
    nlohmann::json e;
    e["basis"] = "dense bsp co-simulated on the same data, shards, batches and seed";
    e["bsp_iterations_to_target"] = bsp_reached_ ? nlohmann::json(bsp_reached_->iteration + 1) : nlohmann::json(nullptr);
    e["bsp_epochs_to_target"] = bsp_reached_ ? nlohmann::json(bsp_reached_->epochs) : nlohmann::json(nullptr);
    e["relative_to_bsp"] = bsp_reached_ && reached_ ? nlohmann::json(bsp_reached_->epochs / reached_->epochs)
                                                    : nlohmann::json(nullptr);
    j["statistical_efficiency"] = e;
  }
  return j;
}

std::string ConvergenceOutputs::table() const {
  const auto& c = *scenario_.training.convergence;
  std::string out = fmt::format("co-simulated training: {} on {} ({} train / {} test samples)\n",
                                sim_.classifier().describe(), c.data->name, c.data->train_size(), c.data->test_size());
  if (reached_)
    out += fmt::format("  time to {:.1f} % test accuracy: {:.6g} s (iteration {}, {:.3g} epochs)\n",
                       100 * c.settings.target_accuracy, reached_->time_s, reached_->iteration + 1, reached_->epochs);
  else
    out += fmt::format("  target {:.1f} % test accuracy not reached in {} iterations\n", 100 * c.settings.target_accuracy,
                       scenario_.workload.iterations);
  if (bsp_) {
    if (bsp_reached_ && reached_)
      out += fmt::format("  statistical efficiency relative to dense bsp: {:.3g} (bsp reaches the target in {:.3g} epochs)\n",
                         bsp_reached_->epochs / reached_->epochs, bsp_reached_->epochs);
    else
      out += fmt::format("  statistical efficiency relative to dense bsp: unknown ({} not reach the target)\n",
                         !bsp_reached_ && !reached_ ? "neither run did" : !bsp_reached_ ? "bsp did" : "this run did");
  }
  if (last_)
    out += fmt::format("  final test accuracy {:.2f} %, test loss {:.4f} (iteration {}, {:.6g} s)\n",
                       100 * last_->test_accuracy, last_->test_loss, last_->iteration + 1, last_->time_s);
  return out;
}

}  // namespace ddlsim::analysis
