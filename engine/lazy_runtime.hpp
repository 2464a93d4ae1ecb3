// ddlsim: what a worker's Runtime does whatever engine runs it -- compute accumulated and slept
// lazily, the iteration's record, and analytic all-reduces resolved at one rendezvous per
// iteration. Its two engines: SimGrid actors (engine/worker_runtime.cpp, every fidelity) and the
// analytic fiber lane (engine/fiber_lane.cpp, analytic fidelity without SimGrid).
#pragma once

#include "models/profile.hpp"
#include "engine/run_state.hpp"

#include <random>
#include <string>

namespace ddlsim::sim::detail {

/// The algorithm the scenario's collective runs for `bytes` ("auto": the one it picks).
std::string collective_name(const RunState& ctx, const models::CollectiveGroup& group, double bytes,
                            const models::AlphaBeta& ab);

/// Analytic fidelity: worker `rank` posts its pending all-reduces' submit times into its
/// iteration's round (the per-bucket latest arrival over all workers), before the rendezvous.
void post_analytic_arrivals(RunState& ctx, int iteration, const WorkerState& state);
/// After every worker has posted (the rendezvous): bucket b runs from max(all arrivals, end of
/// b-1, the end of what earlier rounds resolved) for its closed form, identically on every worker;
/// records its arrival, busy time, traffic and timeline row, clears the pending requests and
/// returns when the last one ends, or with `through_bucket` >= 0 when that bucket's ends.
double resolve_analytic_round(RunState& ctx, int rank, int iteration, WorkerState& state, int through_bucket = -1);

/// The engine-independent part of a worker's Runtime. Compute is accumulated and slept lazily
/// (only when the worker interacts with communication), which is exact because compute touches
/// nothing shared, and keeps per-layer replay cheap. An engine supplies the clock, sleeping,
/// the analytic rendezvous and the communication stream.
class LazyRuntime : public models::Runtime {
 public:
  LazyRuntime(RunState& ctx, int rank)
      : ctx_(ctx), rank_(rank), slot_(ctx.slot(rank)), rng_(ctx.scenario->training.stragglers.seed.value_or(ctx.scenario->seed) * 1'000'003ULL +
             static_cast<std::uint64_t>(rank)) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int workers() const override { return ctx_.group.workers; }
  [[nodiscard]] int servers() const override { return ctx_.group.servers; }
  double now() override { return clock() + debt_; }

  void compute(double seconds, models::Phase phase, const std::string& label) override {
    if (seconds <= 0) return;
    seconds *= factor_;
    if (ctx_.traced(rank_, iteration_)) ctx_.trace(rank_, 0, label, models::to_string(phase), now(), seconds);
    debt_ += seconds;
    current().compute_s += seconds;
    if (phase == models::Phase::ENCODE || phase == models::Phase::DECODE) current().codec_s += seconds;
  }

  /// Untraced, one step: the same additions in the same order as compute() layer by layer.
  void compute_layers(const std::vector<models::Layer>& layers, std::size_t first, std::size_t last,
                      models::Phase phase) override {
    if (ctx_.traced(rank_, iteration_)) return models::WorkerCompute::compute_layers(layers, first, last, phase);
    const bool forward = phase == models::Phase::FORWARD;
    double debt = debt_, compute_s = 0;
    bool any = false;
    for (std::size_t i = first; i < last; ++i) {
      const auto& layer = layers[forward ? i : last - 1 - (i - first)];
      double seconds = forward ? layer.forward_s : layer.backward_s;
      if (seconds <= 0) continue;
      if (!any) compute_s = current().compute_s;
      any = true;
      seconds *= factor_;
      debt += seconds;
      compute_s += seconds;
    }
    if (!any) return;
    debt_ = debt;
    current().compute_s = compute_s;
  }

  void wait_comm() override { wait_until(-1); }
  void wait_comm_through(int bucket) override { wait_until(bucket); }

  void iteration_begin(int iteration) override {
    flush();
    iteration_ = iteration;
    factor_ = ctx_.scenario->training.stragglers.factor(rank_, rng_);
    IterationRecord& rec = ctx_.begin_record(slot_, iteration);
    rec.start_s = rec.end_s = clock();
    rec.arrivals.assign(ctx_.plan.buckets.size(), -1.0);
    if (uses_servers_) rec.held.assign(ctx_.plan.buckets.size(), 0.0);
    current_ = &rec;
  }

  void iteration_end(int iteration) override {
    flush();
    current().end_s = clock();
    current().comm_busy_s += point_to_point_busy_s(current().start_s, current().end_s);
    if (ctx_.adaptive)
      ctx_.adaptive->controller.report(iteration, current().end_s - current().start_s, current().codec_s,
                                       current().comm_busy_s);
    current_ = nullptr;  // completed (and gone) once every worker has ended it
    ctx_.end_record(slot_, iteration);
  }

  void record_events(std::int64_t sent, std::int64_t possible) override {
    current().events_sent = sent;
    current().events_possible = possible;
  }

 protected:
  /// The engine's simulated time.
  [[nodiscard]] virtual double clock() const = 0;
  virtual void sleep_for(double seconds) = 0;
  virtual void sleep_until(double time_s) = 0;
  /// Blocks until every worker has posted its analytic arrivals for the iteration.
  virtual void rendezvous() = 0;
  /// Blocks until the communication stream has finished the first `target` requests queued on it.
  virtual void wait_stream(WorkerState& state, std::int64_t target) = 0;
  /// Time the worker's point-to-point operations kept it busy within [start, end].
  virtual double point_to_point_busy_s(double start_s, double end_s) = 0;

  void flush() {
    if (debt_ > 0) sleep_for(debt_);
    debt_ = 0;
  }
  /// wait_comm (`bucket` < 0) or wait_comm_through(bucket): the analytic round first, then the stream.
  void wait_until(int bucket) {
    flush();
    auto& state = ctx_.workers[static_cast<std::size_t>(slot_)];
    const double t0 = clock();
    if (!state.analytic_pending.empty()) {
      post_analytic_arrivals(ctx_, iteration_, state);
      rendezvous();
      const double last = resolve_analytic_round(ctx_, rank_, iteration_, state, bucket);
      if (last > clock()) sleep_until(last);
    }
    const auto seq = state.bucket_seq.find(bucket);
    const std::int64_t target = bucket < 0 || seq == state.bucket_seq.end() ? state.submitted : seq->second;
    if (state.finished < target) wait_stream(state, target);
    current().exposed_comm_s += clock() - t0;
  }
  /// `request` as queued now: submitted at now(), or at the next cycle (Horovod's launch wait).
  [[nodiscard]] QueuedComm queued(const models::CommRequest& request) {
    QueuedComm item{request, iteration_, now()};
    if (!ctx_.launch_wait_s.empty() && request.group.empty() && request.bucket >= 0)
      item.submit_s += ctx_.launch_wait_s.at(static_cast<std::size_t>(request.bucket));
    return item;
  }
  IterationRecord& current() {
    if (current_ == nullptr)
      throw std::logic_error(fmt::format("worker {}: compute or communication recorded outside an iteration", rank_));
    return *current_;
  }

  RunState& ctx_;
  int rank_;
  int slot_;  // where its state and records are in ctx_ (RunState::slot)
  std::mt19937_64 rng_;
  int iteration_ = 0;
  double factor_ = 1.0;
  double debt_ = 0;
  IterationRecord* current_ = nullptr;  // the open record of the iteration in progress
  bool uses_servers_ = ctx_.scenario->training.sync_model->traits().uses_servers;  // pulls can be held (ssp)
};

}  // namespace ddlsim::sim::detail
