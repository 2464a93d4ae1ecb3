// ddlsim: the analytic fiber lane (engine/fiber_lane.hpp).
//
// One Boost.Context fiber per worker runs the sync model against a FiberRuntime (the same
// LazyRuntime as on SimGrid). Its workers touch nothing shared between rendezvous but their own
// records, so a worker keeps its own clock: sleeping (its compute debt, or until its all-reduces
// end) only moves that clock, and the fiber gives control back to the event loop once per
// iteration, at the rendezvous, which releases every worker at the latest arrival's time in order
// of arrival time -- the order the loop would have woken them in had each slept there (ties: the
// order they came). Each switch resumes a stack no cache holds; at 4,096 noisy workers this took
// the run from four switches per worker and iteration to one. Within traced iterations sleeps go
// through the loop as before, so the timeline's rows come in the order of time. The loop resumes
// fibers in order of wake-up time (ties: in the order they were scheduled).
//
// Stacks (engine/fiber_stacks.hpp): one mapping for all, a canary at the bottom of each, checked once
// the fibers are done (checking it at every switch cost a quarter of the run in cache misses), so
// an overflow stops the run as an internal error, with no outputs put in place, instead of going
// unnoticed. With classes of identical workers (engine/worker_classes.hpp) a fiber runs per
// simulated worker, indexed by its slot.
#include "engine/fiber_lane.hpp"

#include "engine/fiber_stacks.hpp"
#include "engine/lazy_runtime.hpp"

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <deque>
#include <fmt/format.h>
#include <functional>
#include <queue>
#include <stdexcept>

namespace ddlsim::sim::detail {
namespace {

/// The event loop: fibers (one per simulated worker, by slot), their wake-up times and the
/// iteration's rendezvous.
class FiberEngine {
 public:
  explicit FiberEngine(int workers)
      : workers_(workers), fibers_(static_cast<std::size_t>(workers)), callers_(static_cast<std::size_t>(workers)),
        done_(static_cast<std::size_t>(workers), false), slab_(static_cast<std::size_t>(workers), FIBER_STACK_BYTES) {}

  [[nodiscard]] double now() const { return now_; }
  [[nodiscard]] const double* clock() const { return &now_; }

  /// Worker `w` sleeps until `time_s` (at once if that has passed).
  void sleep_until(int w, double time_s) {
    wake(w, std::max(time_s, now_));
    yield(w);
  }
  /// Worker `w`, whose own clock reads `time_s` (>= now()), waits until every worker has come here;
  /// all continue at the latest arrival's time, in order of arrival time (ties: in the order they
  /// came), which is the order they would have come in had each slept until its arrival.
  void rendezvous(int w, double time_s) {
    waiting_.push_back(Arrival{time_s, w});
    if (static_cast<int>(waiting_.size()) == workers_) {
      std::stable_sort(waiting_.begin(), waiting_.end(),
                       [](const Arrival& a, const Arrival& b) { return a.time_s < b.time_s; });
      const double release = std::max(now_, waiting_.back().time_s);
      // Every other worker waits here, so nothing is queued before the release: time moves to it.
      if (!queue_.empty()) throw std::logic_error("the fiber lane's rendezvous filled with wake-ups still queued");
      now_ = release;
      for (const auto& a : waiting_) wake(a.worker, now_);
      waiting_.clear();
    }
    yield(w);
  }

  /// Creates worker `w`'s fiber running `body`, to start at time 0.
  void start(int w, std::function<void()> body) {
    const auto i = static_cast<std::size_t>(w);
    fibers_[i] = bctx::fiber(std::allocator_arg, SlabStack{&slab_, i}, [this, i, body = std::move(body)](bctx::fiber&& caller) {
      callers_[i] = std::move(caller);
      try {
        body();
      } catch (const bctx::detail::forced_unwind&) {
        throw;  // the fiber is being destroyed: Boost.Context unwinds its stack
      } catch (const RunStopped&) {
        stopped_ = true;
      } catch (...) {
        if (!failure_) failure_ = std::current_exception();
      }
      done_[i] = true;
      return std::move(callers_[i]);
    });
    wake(w, 0.0);
  }

  /// Runs until every fiber has finished, one has failed or the run was stopped; fibers left
  /// suspended are unwound. Rethrows a fiber's exception; a rendezvous that never fills is a deadlock.
  void run() {
    started_ = true;
    while ((!queue_.empty() || !ready_.empty()) && !stopped_ && !failure_) {
      Wake next;
      // Wake-ups at the current time in the order they were asked for: those in the heap came first.
      if (!ready_.empty() && (queue_.empty() || queue_.top().time_s > now_)) {
        next = ready_.front();
        ready_.pop_front();
      } else {
        next = queue_.top();
        queue_.pop();
      }
      now_ = next.time_s;
      if (stop_now()) {  // a signal's grace has passed (engine/run_control.hpp): stop within the iteration
        stopped_ = true;
        break;
      }
      const auto i = static_cast<std::size_t>(next.worker);
      if (!ready_.empty()) {  // the next worker's stack; the one after's handles
        prefetch_stack(static_cast<std::size_t>(ready_.front().worker));
        if (ready_.size() > 1) {
          const auto after = static_cast<std::size_t>(ready_[1].worker);
          __builtin_prefetch(&sp_[after], 0, 3);
          __builtin_prefetch(&fibers_[after], 0, 3);
        }
      }
      fibers_[i] = std::move(fibers_[i]).resume();
    }
    fibers_.clear();  // unwinds the fibers still suspended (stopped or failed runs)
    for (std::size_t i = 0; i < done_.size(); ++i)
      if (!slab_.intact(i))
        throw std::logic_error(fmt::format("worker {}'s fiber overflowed its {} KiB stack", i, FIBER_STACK_BYTES / 1024));
    if (failure_) std::rethrow_exception(failure_);
    if (!stopped_ && std::find(done_.begin(), done_.end(), false) != done_.end())
      throw std::runtime_error("the simulation deadlocked (sends and receives do not match)");
  }
  [[nodiscard]] bool stopped() const { return stopped_; }

 private:
  struct Wake {
    double time_s;
    std::uint64_t seq;
    int worker;
    bool operator>(const Wake& o) const { return time_s != o.time_s ? time_s > o.time_s : seq > o.seq; }
  };
  struct Arrival {
    double time_s;
    int worker;
  };
  void wake(int w, double time_s) {
    if (time_s == now_ && started_) ready_.push_back(Wake{time_s, seq_++, w});  // most wake-ups: at a rendezvous
    else queue_.push(Wake{time_s, seq_++, w});
  }
  void yield(int w) {
    sp_[static_cast<std::size_t>(w)] = static_cast<const char*>(__builtin_frame_address(0));
    auto& caller = callers_[static_cast<std::size_t>(w)];
    caller = std::move(caller).resume();
  }

  /// The frames the next worker to resume will touch: from its saved context below where it
  /// yielded up to its callers' frames (each switch otherwise waits on a stack no cache holds).
  void prefetch_stack(std::size_t w) const {
    const char* sp = sp_[w];
    if (sp == nullptr) return;
    for (const char* p = sp - 256; p < sp + 1536; p += 64) __builtin_prefetch(p, 1, 3);
  }

  int workers_;
  std::vector<const char*> sp_ = std::vector<const char*>(static_cast<std::size_t>(workers_), nullptr);
  double now_ = 0;
  std::uint64_t seq_ = 0;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> queue_;
  std::deque<Wake> ready_;  // wake-ups at now_, asked for while running
  bool started_ = false;
  std::vector<bctx::fiber> fibers_;
  std::vector<bctx::fiber> callers_;  // per worker: the event loop, to give control back to
  std::vector<bool> done_;
  std::vector<Arrival> waiting_;      // at the rendezvous
  StackSlab slab_;
  bool stopped_ = false;
  std::exception_ptr failure_;
};

/// A worker's Runtime on the fiber lane: all-reduces among all workers only, resolved analytically.
class FiberRuntime final : public LazyRuntime {
 public:
  FiberRuntime(RunState& ctx, int rank, FiberEngine& engine) : LazyRuntime(ctx, rank), engine_(engine) {}

  void submit(const models::CommRequest& request) override {
    using K = models::CommRequest::Kind;
    if ((request.kind != K::ALLREDUCE && request.kind != K::ALLGATHER && request.kind != K::REDUCE_SCATTER) ||
        !request.group.empty())
      unsupported("a parameter-server or subgroup request");
    ctx_.workers[static_cast<std::size_t>(slot_)].analytic_pending.push_back(queued(request));
  }

  /// Ends the worker at its own time, which the event loop's clock reaches.
  void finish() {
    flush();
    engine_.sleep_until(slot_, clock_s_);
  }

 protected:
  [[nodiscard]] double clock() const override { return clock_s_; }
  void sleep_for(double seconds) override { sleep_until(clock_s_ + seconds); }
  void sleep_until(double time_s) override {
    time_s = std::max(time_s, clock_s_);
    if (traced_segment()) {  // the timeline's rows in the order of time, as written
      engine_.sleep_until(slot_, time_s);
      clock_s_ = engine_.now();
    } else {
      clock_s_ = time_s;
    }
  }
  void rendezvous() override {
    engine_.rendezvous(slot_, clock_s_);
    clock_s_ = engine_.now();
  }
  void wait_stream(WorkerState&, std::int64_t) override { unsupported("a communication stream"); }
  double point_to_point_busy_s(double, double) override { return 0; }

 private:
  [[noreturn]] void unsupported(const char* what) const {
    throw std::logic_error(fmt::format("worker {}: the analytic fiber lane has no {} (engine/fiber_lane.hpp says which "
                                       "scenarios it runs)",
                                       rank_, what));
  }
  /// Sleeps in this iteration go through the event loop: up to the last traced one (the next
  /// iteration's rows follow this one's end), so that workers write their timeline rows in the
  /// order of time, interleaved as their compute happens.
  [[nodiscard]] bool traced_segment() const {
    return ctx_.scenario->output.timeline && iteration_ < ctx_.scenario->output.timeline_iterations;
  }

  FiberEngine& engine_;
  double clock_s_ = 0;  // the worker's own time: its sleeps outside traced iterations only move it
};

}  // namespace

SimulationResult simulate_on_fibers(const Scenario& scenario, const RunOptions& options) {
  RunState ctx;
  prepare_context(ctx, scenario, options);
  if (!options.every_worker) ctx.classes = worker_classes(scenario);
  const int simulated = ctx.simulated_workers();
  ctx.workers.resize(static_cast<std::size_t>(simulated));
  ctx.records.by_worker.resize(static_cast<std::size_t>(simulated));
  if (ctx.classes)
    ctx.result.notes.push_back(fmt::format(
        "{} of {} workers simulated: the others compute at the same speed as one of them and their records are "
        "its records (docs/architecture.md, \"Classes of identical workers\")",
        simulated, scenario.platform.workers));
  const auto& sync = *scenario.training.sync_model;
  double end_s = 0;
  bool stopped = false;
  {
    FiberEngine engine(simulated);
    ctx.fiber_clock_s = engine.clock();
    for (int slot = 0; slot < simulated; ++slot) {
      const int rank = ctx.classes ? ctx.classes->simulated()[static_cast<std::size_t>(slot)] : slot;
      engine.start(slot, [&ctx, &sync, &engine, rank]() {
        FiberRuntime runtime(ctx, rank, engine);
        sync.run_worker(runtime, ctx.plan);
        runtime.finish();
      });
    }
    engine.run();
    end_s = engine.now();
    stopped = engine.stopped();
  }
  ctx.fiber_clock_s = &end_s;
  ctx.result.stopped = stopped;
  if (!stopped) check_records_complete(ctx);
  if (ctx.classes) ctx.classes->add_traffic(ctx.group, ctx.result.workers);
  ctx.result.makespan_s = end_s;
  collect_links(ctx.result, scenario.platform.graph, nullptr,
                ctx.analytic_links ? &ctx.analytic_links->bytes() : nullptr);
  return std::move(ctx.result);
}

}  // namespace ddlsim::sim::detail
