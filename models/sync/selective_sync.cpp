// Selective synchronisation (SelSync; Tyagi & Swany, "Accelerating distributed ML training via
// selective synchronization", IEEE CLUSTER 2023 -- the authors of seed 002).
//
// Every worker replays its iteration and applies its own SGD step. A worker flags the iteration
// when its relative gradient change is delta or more (models/trigger_rules.hpp: the first
// iteration, or |G_k - G_{k-1}| / G_{k-1} >= delta for the total gradient norm G); the workers
// then exchange their flags, and when any flagged, all synchronise: they average their parameters
// (SelSync aggregates parameters, not gradients) -- one all-reduce per gradient bucket's fused
// buffer with the scenario's collective ("aggregation": "allreduce", the default), or a push of
// every bucket to the parameter servers, which average the N copies and send the mean back
// ("parameter_server"); otherwise nobody communicates. The flag exchange: one 4-byte all-reduce
// among all workers with the scenario's collective (a flow at every fidelity), or one scalar to
// every server and its answer. Parameter averaging is not overlapped with backward (the decision
// needs the whole gradient), and the averaging arithmetic is not timed.
//
// With delta = 0 every iteration synchronises: bsp without overlap (optimizer, then the model's
// all-reduce, in the other order) plus the flag exchange. Decisions (models/event_decisions.hpp):
// "trace" replays a recorded trace (an iteration synchronises when any worker's recorded flag is
// set); "surrogate" draws each iteration with the probability that the trace's iterations in the
// same window synchronised, after its first iteration (which always does); "live" (with
// training.convergence) takes them from the co-simulated training: its numerics do not depend on
// time, so they are computed before the run (models/convergence/cosimulation.hpp) and replayed.
#include "models/event_decisions.hpp"
#include "models/sync_model.hpp"
#include "models/training_trace.hpp"

#include <fmt/format.h>
#include <map>
#include <optional>
#include <stdexcept>

namespace ddlsim::models {
namespace {

class SelectiveSync final : public SyncModel {
 public:
  SelectiveSync(DecisionSource source, std::optional<double> delta, bool parameter_server)
      : source_(std::move(source)), delta_(delta), parameter_server_(parameter_server) {}

  void bind(const SyncBinding& b) override {
    if (source_.live) {  // set_live_decisions() gives them (scenario/scenario_convergence.cpp)
      if (!delta_)
        throw ConfigError(pointer_append(source_.path, "delta"),
                          "\"decisions\": \"live\" needs the relative gradient change that flags an iteration (e.g. 0.3)");
      sync_.assign(static_cast<std::size_t>(b.iterations), 0);
      return;
    }
    trace_ = load_decision_trace(source_, b, "selective_sync");
    const auto& t = *trace_;
    if (delta_ && *delta_ != t.algorithm.delta)
      throw ConfigError(pointer_append(source_.path, "delta"),
                        fmt::format("{} here, but the training trace \"{}\" was recorded with delta {}; another delta "
                                    "gives other numerics: record a trace with it (tools/record_training.py) or leave "
                                    "\"delta\" out",
                                    *delta_, source_.trace_file, t.algorithm.delta));
    const auto synced = [&t](int k) {
      for (int w = 0; w < t.workers; ++w)
        if (t.sent(k, w, 0)) return true;
      return false;
    };
    sync_.assign(static_cast<std::size_t>(b.iterations), 0);
    if (!source_.surrogate) {
      check_trace_bytes(t, b, source_);
      for (int k = 0; k < b.iterations; ++k) sync_[static_cast<std::size_t>(k)] = synced(k) ? 1 : 0;
      return;
    }
    const int last = t.iterations - 1;
    if (last < 1)
      throw ConfigError(pointer_append(source_.path, "trace"),
                        fmt::format("training trace \"{}\" has 1 iteration: nothing to fit a surrogate to", source_.trace_file));
    const int windows = window_of(last, 1, last, source_.windows) + 1;
    std::vector<double> rate(static_cast<std::size_t>(windows), 0), count(static_cast<std::size_t>(windows), 0);
    for (int k = 1; k <= last; ++k) {
      const auto win = static_cast<std::size_t>(window_of(k, 1, last, source_.windows));
      rate[win] += synced(k) ? 1 : 0;
      count[win] += 1;
    }
    for (std::size_t w = 0; w < rate.size(); ++w) rate[w] /= count[w];
    for (int k = 0; k < b.iterations; ++k)
      sync_[static_cast<std::size_t>(k)] =
          k == 0 || surrogate_uniform(b.seed, static_cast<std::uint64_t>(k), 0, 0) <
                        rate[static_cast<std::size_t>(window_of(k, 1, last, source_.windows))]
              ? 1
              : 0;
  }

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override {
    std::vector<int> everyone(static_cast<std::size_t>(rt.workers()));
    for (int w = 0; w < rt.workers(); ++w) everyone[static_cast<std::size_t>(w)] = w;
    const auto kind = parameter_server_ ? CommRequest::Kind::PUSH_PULL : CommRequest::Kind::ALLREDUCE;
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      replay_compute(rt, plan, true);
      if (parameter_server_) {
        exchange_control(rt);
      } else if (rt.workers() > 1) {
        rt.submit(CommRequest{CommRequest::Kind::ALLREDUCE, 0, CONTROL_BYTES, everyone, 0});
        rt.wait_comm();
      }
      const bool sync = sync_[static_cast<std::size_t>(it)] != 0;
      if (sync) {
        submit_buckets(rt, plan, kind);
        wait_buckets(rt, plan);
      }
      rt.record_events(sync ? 1 : 0, 1);
      rt.iteration_end(it);
    }
  }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_servers = parameter_server_,
            .uses_subgroup_collectives = !parameter_server_,
            .uses_collective = !parameter_server_};
  }

  void run_server(ServerRuntime& srv, const TrainingPlan& plan) const override {
    for (int it = 0; it < plan.iterations; ++it) {
      answer_control(srv, receive_control(srv), it);
      if (sync_[static_cast<std::size_t>(it)] == 0) continue;
      std::map<int, std::vector<Push>> pending;  // bucket -> pushes
      for (std::int64_t n = static_cast<std::int64_t>(srv.workers()) * static_cast<std::int64_t>(plan.buckets.size()); n > 0; --n) {
        const Push push = srv.receive_push();
        auto& got = pending[push.bucket];
        got.push_back(push);
        if (static_cast<int>(got.size()) < srv.workers()) continue;
        for (const auto& p : got) srv.send_pull(p.worker, p.bucket, shard_bytes(srv, plan, p.bucket), it);
        pending.erase(push.bucket);
      }
    }
  }

  [[nodiscard]] std::int64_t pushes_per_worker(const TrainingPlan& plan, int /*worker*/) const override {
    std::int64_t synced = 0;
    for (int it = 0; it < plan.iterations; ++it) synced += sync_[static_cast<std::size_t>(it)];
    return plan.iterations + synced * static_cast<std::int64_t>(plan.buckets.size());
  }

  void set_live_decisions(const std::vector<char>& per_iteration) override {
    if (!source_.live || per_iteration.size() != sync_.size())
      throw std::logic_error("selective_sync: live decisions for a model that does not take them, or of another length");
    sync_ = per_iteration;
  }

  [[nodiscard]] std::string events_unit() const override { return "synchronised iteration (per worker)"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"delta", trace_ ? trace_->algorithm.delta : delta_.value_or(0.0)},
            {"aggregation", parameter_server_ ? "parameter_server" : "allreduce"},
            {"averaged", "parameters"},
            {"decisions", source_.live ? "live" : source_.surrogate ? "surrogate" : "trace"}};
  }
  [[nodiscard]] nlohmann::json decisions() const override {
    auto j = source_.live ? nlohmann::json{{"source", "live"},
                                           {"rule", "a worker flags when its mean gradient's norm changed by delta or more "
                                                    "(the co-simulated training's, computed before the run)"}}
                          : describe_source(source_, trace_.get());
    std::int64_t synced = 0;
    for (char s : sync_) synced += s;
    j["synchronised_iterations"] = synced;
    j["synchronised_fraction"] = sync_.empty() ? 0.0 : static_cast<double>(synced) / static_cast<double>(sync_.size());
    return j;
  }

 private:
  DecisionSource source_;
  std::optional<double> delta_;
  bool parameter_server_;
  std::shared_ptr<const TrainingTrace> trace_;
  std::vector<char> sync_;  // per iteration
};

/// The trace rule of SelSync: a worker flags an iteration when its total gradient norm's relative
/// change reached delta (models/trigger_rules.hpp: SelSyncTrigger); every tensor follows its flag.
class SelSyncRule final : public TraceRule {
 public:
  explicit SelSyncRule(double delta) : delta_(delta) {}
  void describe(TraceAlgorithm& a) const override { a.delta = delta_; }
  void check(const TrainingTrace& t, const std::string&, const TraceMismatch& mismatch) const override {
    for (int w = 0; w < t.workers; ++w) {
      SelSyncTrigger trig(delta_);
      for (int k = 0; k < t.iterations; ++k) {
        const bool flag = trig.step(t.total_grad_norm(k, w));
        for (int i = 0; i < t.tensor_count(); ++i)
          if (flag != t.sent(k, w, i)) mismatch(k, w, i, flag);
      }
    }
  }

 private:
  double delta_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "selective_sync",
                "SelSync: every worker steps locally; the workers average their parameters (all-reduce or parameter "
                "server) only in iterations where a worker's relative gradient change reached delta; decisions "
                "replayed from a training trace or a fitted surrogate",
                [](ddlsim::ObjectReader& params) {
                  auto source = ddlsim::models::read_decision_source(params, true, true);
                  std::optional<double> delta;
                  if (params.has("delta")) delta = params.number("delta", 0, 0, 1e6);
                  const bool ps = params.choice("aggregation", {"allreduce", "parameter_server"}, "allreduce") == "parameter_server";
                  return std::make_unique<ddlsim::models::SelectiveSync>(std::move(source), delta, ps);
                })

DDLSIM_REGISTER(ddlsim::models::TraceRule, "selective_sync", "SelSync's relative gradient change of each worker against delta (models/trigger_rules.hpp: SelSyncTrigger)",
                [](ddlsim::ObjectReader& a) {
                  (void)a.require("name");
                  (void)a.require("delta");
                  return std::make_unique<ddlsim::models::SelSyncRule>(a.number("delta", 0, 0, 1e6));
                })
