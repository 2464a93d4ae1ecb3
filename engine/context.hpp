// ddlsim: the shared state of one simulation run, and the actors that use it.
//
// Internal to sim/: simulation.cpp builds a Context and starts the actors;
// worker_runtime.cpp holds each worker's compute actor (the Runtime facade the
// sync model runs against) and communication stream; servers.cpp the parameter
// servers; records.cpp the open per-iteration records, completed once every worker has
// ended an iteration, and what is derived from the records after the run.
// SimGrid runs actors one at a time in one thread (contexts/nthreads=1), so the
// plain containers here are safe.
#pragma once

#include "models/dependent_rounds.hpp"
#include "models/sync_model.hpp"
#include "engine/s4u_emitter.hpp"
#include "engine/analytic_links.hpp"
#include "engine/analytic_network.hpp"
#include "engine/engine.hpp"
#include "engine/schedule_executor.hpp"
#include "engine/simulation.hpp"
#include "engine/worker_classes.hpp"

#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace ddlsim::sim::detail {

namespace sg4 = simgrid::s4u;

/// A gradient push to a parameter server, or its answer (the pull).
struct PsMessage {
  int worker = 0;
  int bucket = 0;
  double bytes = 0;
  std::int64_t version = 0;
  int iteration = 0;  // the pushing worker's iteration (for the timeline)
};

struct QueuedComm {
  models::CommRequest request;
  int iteration = 0;
  double submit_s = 0;  // simulated time of the submit (the compute actor sleeps lazily)
};

/// Per-worker state shared by its compute actor and its communication-stream actor.
struct WorkerState {
  std::deque<QueuedComm> queue;
  sg4::SemaphorePtr queued;   // SimGrid lane only (created with the actors)
  sg4::SemaphorePtr drained;  // released once when a waiter waits for the stream
  int outstanding = 0;                                     // submitted and not finished
  bool waiting = false;
  std::vector<QueuedComm> analytic_pending;  // analytic fidelity: all-reduces resolved at wait_comm
  std::map<std::pair<int, int>, TrafficCounters> analytic_traffic;  // per (bucket, rank in the rotated schedule)
  std::map<std::pair<int, int>, std::int64_t> seen_version;  // (server, bucket) -> version last pulled
  int running = 0;        // requests the stream's actors are executing now (max_inflight > 1: several)
  double busy_since = 0;  // when `running` last rose from 0: busy time is the union of the requests' spans
};

/// Analytic fidelity: each iteration's per-bucket latest arrival over all workers, and the last
/// bucket resolution made (one collective, one start: the same end on every worker that starts it then).
struct AnalyticRound {
  struct Resolved {
    double start_s = -1;
    double bytes = -1;
    double end_s = 0;
    const models::Collective* algorithm = nullptr;
  };
  std::vector<double> arrival;
  std::vector<Resolved> resolved;  // per bucket
  int readers = 0;
};

/// Adaptive compression (seed 002): the controller, shared by all workers, and what it decided.
struct AdaptiveRun {
  explicit AdaptiveRun(models::AdaptiveController c) : controller(std::move(c)) {}
  models::AdaptiveController controller;
  std::vector<models::AdaptiveController::Decision> decisions;  // per iteration decided so far
  std::vector<models::AlphaBeta> probes;                        // the network at each decision
  sg4::BarrierPtr barrier;                                      // all workers, at each choice
};

/// The per-iteration records still open (engine/records.cpp): each worker's, from the oldest
/// iteration some worker has not ended yet.
struct OpenRecords {
  int first = 0;                                       // the oldest open iteration
  std::vector<std::deque<IterationRecord>> by_worker;  // [rank][iteration - first]
  std::deque<int> ended;                               // per open iteration: workers that have ended it
  std::map<int, std::string> collectives;              // per open iteration: what its gradients ran (worker 0's calls)
};

/// Shared state of one simulation. SimGrid runs actors one at a time in one
/// thread (contexts/nthreads=1), so plain containers are safe here.
struct Context {
  const Scenario* scenario = nullptr;
  models::TrainingPlan plan;
  models::CollectiveGroup group;
  models::AlphaBeta ab;
  std::unique_ptr<AnalyticNetwork> network;          // alpha and beta over time (analytic fidelity)
  std::unique_ptr<AnalyticLinks> analytic_links;     // analytic fidelity: the collectives' link bytes
  platforms::EmittedPlatform platform;
  std::unique_ptr<ScheduleExecutor> executor;
  sg4::BarrierPtr comm_barrier;                       // analytic fidelity: all communication streams
  sg4::BarrierPtr end_barrier;                        // models with a logical graph: all workers, at the end
  std::shared_ptr<const models::LogicalGraph> graph;  // the sync model's logical graph, if it has one
  std::vector<WorkerState> workers;
  std::vector<std::deque<double>> collective_jobs;   // per server: collectives (bytes) it must serve
  std::vector<sg4::SemaphorePtr> collective_ready;
  std::vector<std::vector<sg4::Mailbox*>> push_boxes;  // per server, per worker
  std::map<int, AnalyticRound> rounds;               // analytic fidelity, by iteration
  std::unique_ptr<AdaptiveRun> adaptive;             // training.adaptive_compression
  std::map<int, models::AlphaBeta> iteration_ab;     // flow fidelity under link traces: "auto"'s network, by iteration
  std::map<int, double> iteration_pick_s;            // ... and when it was taken
  /// Under link traces on a platform with a contention estimate: a group per distinct set of link
  /// values, its estimate pricing the links as they were then (resolution_group).
  std::map<std::vector<double>, std::unique_ptr<models::CollectiveGroup>> traced_groups;
  std::vector<double> launch_wait_s;                 // per bucket: submit to launch (Horovod's cycle); empty: none
  const RunOptions* options = nullptr;
  const double* fiber_clock_s = nullptr;  // the fiber lane's clock (engine/fiber_lane.cpp); null: SimGrid's
  /// The fiber lane's classes of identical workers (engine/worker_classes.hpp); null: every worker
  /// is simulated, and slots are ranks.
  std::unique_ptr<WorkerClasses> classes;
  OpenRecords records;
  double static_cr = 1;            // the fraction of gradient elements the scenario's compressor sends
  std::vector<double> variant_cr;  // adaptive compression: the same per candidate
  SimulationResult result;

  [[nodiscard]] bool analytic() const { return scenario->network.fidelity == Fidelity::ANALYTIC; }
  /// Simulated time now, under whichever engine runs the scenario.
  [[nodiscard]] double now_s() const { return fiber_clock_s != nullptr ? *fiber_clock_s : sg4::Engine::get_clock(); }
  /// The workers simulated one by one: `workers`, `records.by_worker` and the rounds count them.
  [[nodiscard]] int simulated_workers() const {
    return classes ? static_cast<int>(classes->simulated().size()) : group.workers;
  }
  /// Where simulated worker `rank`'s state and records are: its rank, or its slot among the classes.
  [[nodiscard]] int slot(int rank) const { return classes ? classes->slot(rank) : rank; }
  [[nodiscard]] bool stepwise() const { return scenario->network.granularity == Granularity::STEPWISE; }
  sg4::Mailbox* pull_box(int server, int worker) {
    return sg4::Mailbox::by_name(fmt::format("pull:{}>{}", server, worker));
  }
  [[nodiscard]] bool traced(int pid, int iteration) const {
    return scenario->output.timeline && iteration < scenario->output.timeline_iterations &&
           (pid < scenario->output.timeline_workers || pid >= group.workers);
  }
  void trace(int pid, int tid, std::string name, std::string category, double start, double duration);
  /// Worker `rank` starts `iteration` (the next after its previous one): its new record.
  IterationRecord& begin_record(int rank, int iteration);
  /// Worker `rank`'s record of `iteration`, which must be open (not yet completed by every worker).
  IterationRecord& record(int rank, int iteration);
  /// Worker `rank` has ended `iteration`: completes every iteration all workers have now ended
  /// (waits computed, totals, the sink or the result, progress), then stops the run by throwing
  /// RunStopped (engine/engine.hpp) if RunOptions::stop_requested says so.
  void end_record(int rank, int iteration);
  /// The alpha and beta "auto" picks with for a collective of `iteration` starting at `t`:
  /// under adaptive compression the network its decision probed; at analytic fidelity the
  /// network at `t`; at flow fidelity the network when the first worker started one of the
  /// iteration's collectives (the same pick on every worker); without link traces, `ab`.
  const models::AlphaBeta& resolution_ab(int iteration, double t);
  /// The group "auto" picks with at the same moment: `group`, or under link traces on a platform
  /// with a contention estimate (not the uniform star) one whose estimate prices every link at its
  /// traced value then (the closed forms alone would see only alpha and beta).
  const models::CollectiveGroup& resolution_group(int iteration, double t);
  /// Records that `iteration` ran its gradient collective with `name` (worker 0's calls).
  void note_collective(int iteration, const std::string& name);
};

/// Everything of a run that neither engine needs to build: the plan (buckets, compression,
/// roots), the collective group, the analytic network, per-worker state and records; then
/// options.before_run (engine/simulation.cpp).
void prepare_context(Context& ctx, const Scenario& scenario, const RunOptions& options);

/// Adaptive compression: the candidate ratio `iteration` runs, decided by the first worker
/// that starts it at `now_s` (at a choice, after every worker has reported; engine/adaptive_run.cpp).
int adaptive_variant(Context& ctx, int iteration, double now_s);

/// The fixed cost of one collective call (launch and handshake); a collective
/// among a single rank is no call at all.
/// A compressor's dependent rounds are one call each (models/dependent_rounds.hpp).
inline double call_cost_s(const Context& ctx, const models::Collective& algo, double bytes) {
  return ctx.group.workers > 1 || algo.uses_servers()
             ? ctx.scenario->network.collective_call_s * models::collective_calls(algo, bytes)
             : 0.0;
}

inline std::uint64_t units_of(double bytes) { return static_cast<std::uint64_t>(std::llround(bytes * BYTE_SCALE)); }

/// The units a point-to-point message of `bytes` from rank `src` to rank `dst` (gossip, puts, pushes,
/// pulls; servers after the workers) puts on the wire: the library's protocol efficiency applies to it
/// as to a collective's messages (engine/schedule_executor.cpp). Counts them in links.csv (engine/link_bytes.hpp).
std::uint64_t wire_units(const Context& ctx, int src, int dst, double bytes);

inline void add_traffic(const TrafficCounters& c, double& bytes, std::int64_t& messages) {
  bytes += c.bytes_sent;
  messages += c.messages_sent;
}

/// The ranks of a schedule rotated so that `root` plays rank 0 (empty for root 0: as is).
std::vector<int> rotation(int workers, int root);

/// The compute actor of worker `rank`: the sync model's worker loop on a SimRuntime.
void run_worker(Context& ctx, int rank, const models::SyncModel& sync);
/// One of worker `rank`'s communication-stream actors (`slot` of training.bucketing.max_inflight):
/// together they take the worker's requests in order, each running one at a time (daemon).
void comm_stream(Context& ctx, int rank, int slot);

// ---- framework bucketing and concurrent collectives (engine/concurrent_comm.cpp) ----
/// The plan's buckets under the scenario's bucketing policy, and Horovod's launch waits.
void plan_buckets(Context& ctx);
/// The ranks a collective of `bucket` runs as: with max_inflight > 1 every bucket of the
/// all-workers collectives has its own mailboxes (ranks offset by (bucket + 1) x hosts, as
/// gloo matches each collective's messages by its own tag), else the ranks themselves.
/// `rotated`: the schedule's rank i on worker rotated[i] (empty: as is).
struct ChannelRanks {
  int rank = 0;
  std::vector<int> members;  // the schedule's peers mapped to ranks (empty: as is)
};
ChannelRanks channel_ranks(const Context& ctx, int rank, int bucket, const std::vector<int>& rotated);
/// The hosts the ScheduleExecutor maps ranks to: one copy per channel.
std::vector<sg4::Host*> channel_hosts(const Context& ctx);
/// Analytic fidelity, max_inflight > 1: per pending all-reduce (submit order), this worker's
/// dispatch (`own_s`), the collective's start and end (models::schedule_concurrent, the same on
/// every worker), its share of the stream's busy time (the union of [own, end]) and a timeline row.
struct AnalyticSpan {
  double own_s = 0;
  double start_s = 0;
  double end_s = 0;
  double busy_s = 0;
  int slot = 0;
};
std::vector<AnalyticSpan> concurrent_spans(Context& ctx, const std::vector<QueuedComm>& pending,
                                           const std::vector<double>& arrival);
/// Parameter server `server`: the sync model's server loop on a SimServerRuntime.
void run_server(Context& ctx, int server, const models::SyncModel& sync);
/// A parameter server's side of collectives that use servers (e.g. "ps") (daemon).
void collective_server(Context& ctx, int server);
/// After a run that was not stopped: every record must have been completed.
void check_records_complete(const Context& ctx);
/// Per-link bytes and utilisation from SimGrid's link-load plugin; without a platform (the fiber
/// lane, where nothing flows) every link's two directions with 0 bytes.
/// `analytic`: the analytic collectives' bytes per directed link (AnalyticLinks::bytes), or null.
void collect_links(SimulationResult& result, const platforms::Topology& topo, const platforms::EmittedPlatform* platform,
                   const std::vector<double>* analytic);

}  // namespace ddlsim::sim::detail
