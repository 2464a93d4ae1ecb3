// Ordered gradients (seed 003: Chen, Sadler and Blum, "Ordered gradient approach for
// communication-efficient distributed learning", IEEE SPAWC 2020): per iteration only the m
// workers with the most informative gradients -- the largest norms -- transmit to the parameter
// server, which applies the mean of those m and sends the model back to every worker.
//
// A worker replays I/O, forward and backward (no overlap: the choice needs the whole gradient),
// then the selection runs as traffic of its own: every worker sends its gradient norm (one fp32
// scalar) to every server and each server answers each worker with one scalar (selected or not)
// once it has all N norms. Selected workers push their gradient buckets in S shards; the others
// only wait for the pull. A server updates a bucket once the m selected pushes are in (its share
// of the profile's optimizer step, as bsp's servers) and sends the shard to all N workers. With
// m = N an iteration is bsp on parameter servers without overlap plus the norm exchange.
//
// Decisions (models/event_decisions.hpp): "trace" replays who a recorded trace selected (same
// workers, tensors matching the profile); "surrogate" selects m of the N workers uniformly at
// random each iteration (seeded) -- with data shards drawn alike, which worker holds the largest
// gradient is close to uniform; it needs no trace and fits nothing from one. "live" (with
// training.convergence): the co-simulated training's own selection, computed before the run (the
// numerics do not depend on time) and replayed.
#include "models/event_decisions.hpp"
#include "models/sync_model.hpp"
#include "models/training_trace.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace ddlsim::models {
namespace {

class OrderedGradients final : public SyncModel {
 public:
  OrderedGradients(DecisionSource source, std::optional<int> m) : source_(std::move(source)), m_(m) {}

  void bind(const SyncBinding& b) override {
    workers_ = b.workers;
    // One decision per iteration and worker is drawn and kept before the run: bounded, so that a
    // hostile iteration count is refused here instead of exhausting memory (docs/reliability.md).
    constexpr double MAX_DECISIONS = 1 << 28;
    if (static_cast<double>(b.iterations) * b.workers > MAX_DECISIONS)
      throw ConfigError("/workload/iterations",
                        fmt::format("ordered_gradients keeps a decision per iteration and worker: {} iterations x {} "
                                    "workers = {:.3g}, more than the {:.3g} (256 MiB) it holds; run fewer iterations",
                                    b.iterations, b.workers, static_cast<double>(b.iterations) * b.workers, MAX_DECISIONS));
    selected_.assign(static_cast<std::size_t>(b.iterations) * static_cast<std::size_t>(b.workers), 0);
    if (source_.live) {  // set_live_decisions() gives them (scenario/scenario_convergence.cpp)
      if (!m_) throw ConfigError(pointer_append(source_.path, "m"), "missing required key (live decisions select m workers)");
      if (*m_ > b.workers)
        throw ConfigError(pointer_append(source_.path, "m"), fmt::format("{} exceeds the {} workers", *m_, b.workers));
      return;
    }
    if (source_.surrogate) {
      if (!source_.trace_file.empty()) {  // the surrogate takes m from it, and nothing else
        trace_ = load_decision_trace(source_, b, "ordered_gradients");
        if (!m_) m_ = trace_->algorithm.m;
      }
      if (!m_) throw ConfigError(pointer_append(source_.path, "m"), "missing required key (the surrogate selects m workers)");
      if (*m_ > b.workers)
        throw ConfigError(pointer_append(source_.path, "m"), fmt::format("{} exceeds the {} workers", *m_, b.workers));
      std::vector<int> ranks(static_cast<std::size_t>(b.workers));
      for (int k = 0; k < b.iterations; ++k) {
        std::iota(ranks.begin(), ranks.end(), 0);
        std::vector<double> key(ranks.size());
        for (int w = 0; w < b.workers; ++w)
          key[static_cast<std::size_t>(w)] = surrogate_uniform(b.seed, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(w), 1);
        std::stable_sort(ranks.begin(), ranks.end(), [&](int x, int y) { return key[static_cast<std::size_t>(x)] < key[static_cast<std::size_t>(y)]; });
        for (int i = 0; i < *m_; ++i) selected_[index(k, ranks[static_cast<std::size_t>(i)])] = 1;
      }
      return;
    }
    trace_ = load_decision_trace(source_, b, "ordered_gradients");
    if (m_ && *m_ != trace_->algorithm.m)
      throw ConfigError(pointer_append(source_.path, "m"),
                        fmt::format("{} here, but the training trace \"{}\" was recorded with m {}; another m gives "
                                    "other numerics: record a trace with it (tools/record_training.py) or leave \"m\" out",
                                    *m_, source_.trace_file, trace_->algorithm.m));
    m_ = trace_->algorithm.m;
    check_trace_bytes(*trace_, b, source_);
    for (int k = 0; k < b.iterations; ++k)
      for (int w = 0; w < b.workers; ++w) selected_[index(k, w)] = trace_->sent(k, w, 0) ? 1 : 0;
  }

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override {
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      replay_compute(rt, plan, false);
      exchange_control(rt);  // the norm up, the selection back
      const bool selected = selected_[index(it, rt.rank())] != 0;
      submit_buckets(rt, plan, selected ? CommRequest::Kind::PUSH_PULL : CommRequest::Kind::PULL);
      wait_buckets(rt, plan);
      rt.record_events(selected ? 1 : 0, 1);
      rt.iteration_end(it);
    }
  }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_servers = true,
            .uses_collective = false};
  }

  void run_server(ServerRuntime& srv, const TrainingPlan& plan) const override {
    const double total = plan.profile->grad_bytes();
    for (int it = 0; it < plan.iterations; ++it) {
      answer_control(srv, receive_control(srv), it);
      int m = 0;
      for (int w = 0; w < srv.workers(); ++w) m += selected_[index(it, w)];
      std::map<int, int> got;  // bucket -> selected pushes received
      for (std::int64_t n = static_cast<std::int64_t>(m) * static_cast<std::int64_t>(plan.buckets.size()); n > 0; --n) {
        const Push push = srv.receive_push();
        if (++got[push.bucket] < m) continue;
        const double share = total > 0 ? plan.buckets[static_cast<std::size_t>(push.bucket)].bytes / total : 0;
        srv.compute(plan.profile->optimizer_s * share / srv.servers(), "update");
        for (int w = 0; w < srv.workers(); ++w) srv.send_pull(w, push.bucket, shard_bytes(srv, plan, push.bucket), it + 1);
      }
    }
  }

  [[nodiscard]] std::int64_t pushes_per_worker(const TrainingPlan& plan, int worker) const override {
    std::int64_t chosen = 0;
    for (int it = 0; it < plan.iterations; ++it) chosen += selected_[index(it, worker)];
    return plan.iterations + chosen * static_cast<std::int64_t>(plan.buckets.size());
  }

  void set_live_decisions(const std::vector<char>& per_iteration_and_worker) override {
    if (!source_.live || per_iteration_and_worker.size() != selected_.size())
      throw std::logic_error("ordered_gradients: live decisions for a model that does not take them, or of another length");
    selected_ = per_iteration_and_worker;
  }

  [[nodiscard]] std::string events_unit() const override { return "gradient transmitted to the servers"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"m", m_ ? nlohmann::json(*m_) : nlohmann::json(nullptr)},
            {"decisions", source_.live ? "live" : source_.surrogate ? "surrogate" : "trace"},
            {"control_bytes_per_worker_and_server", CONTROL_BYTES}};
  }
  [[nodiscard]] nlohmann::json decisions() const override {
    if (source_.live)
      return {{"source", "live"},
              {"rule", "the m workers with the largest gradient norms (the co-simulated training's, computed before the run)"}};
    return describe_source(source_, trace_.get());
  }

 private:
  [[nodiscard]] std::size_t index(int k, int w) const {
    return static_cast<std::size_t>(k) * static_cast<std::size_t>(workers_) + static_cast<std::size_t>(w);
  }

  DecisionSource source_;
  std::optional<int> m_;
  std::shared_ptr<const TrainingTrace> trace_;
  int workers_ = 0;
  std::vector<char> selected_;  // iteration x worker
};

/// The trace rule of ordered gradients: per iteration the m workers with the largest total gradient
/// norms push every tensor (models/trigger_rules.hpp: ordered_selection).
class OrderedSelectionRule final : public TraceRule {
 public:
  explicit OrderedSelectionRule(int m) : m_(m) {}
  void describe(TraceAlgorithm& a) const override { a.m = m_; }
  void check(const TrainingTrace& t, const std::string& path, const TraceMismatch& mismatch) const override {
    if (m_ > t.workers)
      throw ConfigError(path + "/algorithm/m", fmt::format("m = {} exceeds the trace's {} workers", m_, t.workers));
    std::vector<double> g(static_cast<std::size_t>(t.workers));
    for (int k = 0; k < t.iterations; ++k) {
      for (int w = 0; w < t.workers; ++w) g[static_cast<std::size_t>(w)] = t.total_grad_norm(k, w);
      const auto sel = ordered_selection(g, m_);
      for (int w = 0; w < t.workers; ++w)
        for (int i = 0; i < t.tensor_count(); ++i)
          if ((sel[static_cast<std::size_t>(w)] != 0) != t.sent(k, w, i)) mismatch(k, w, i, sel[static_cast<std::size_t>(w)] != 0);
    }
  }

 private:
  int m_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "ordered_gradients",
                "ordered gradients: per iteration only the m workers with the largest gradient norms push to the "
                "parameter servers (after a norm exchange), all pull the model; decisions replayed from a training "
                "trace or drawn by a seeded surrogate",
                [](ddlsim::ObjectReader& params) {
                  auto source = ddlsim::models::read_decision_source(params, false, true);
                  if (params.has("windows"))
                    throw ddlsim::ConfigError(params.path_of("windows"), "the ordered_gradients surrogate has no windows: it selects uniformly");
                  std::optional<int> m;
                  if (params.has("m")) m = static_cast<int>(params.integer("m", 1, 1, 1'000'000));
                  return std::make_unique<ddlsim::models::OrderedGradients>(std::move(source), m);
                })

DDLSIM_REGISTER(ddlsim::models::TraceRule, "ordered_gradients", "the m workers with the largest gradient norms push (models/trigger_rules.hpp: ordered_selection)",
                [](ddlsim::ObjectReader& a) {
                  (void)a.require("name");
                  return std::make_unique<ddlsim::models::OrderedSelectionRule>(
                      static_cast<int>(a.required_integer("m", 1, 1'000'000)));
                })
