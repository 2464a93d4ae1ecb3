// ddlsim: the engine-neutral state of one simulation run (RunState) and what works on it.
//
// Both engines run on a RunState: the analytic fiber lane (engine/fiber_lane.cpp) on it alone,
// without SimGrid; the SimGrid engine on a Context, which adds its handles (engine/context.hpp).
// lazy_runtime.hpp, records.cpp and analytic_round.cpp work on it, so the fiber lane includes no
// SimGrid header (cmake/check_layers.cmake checks it).
#pragma once

#include "engine/analytic_links.hpp"
#include "scenario/analytic_network.hpp"
#include "engine/run_control.hpp"
#include "engine/simulation.hpp"
#include "engine/worker_classes.hpp"
#include "models/protocol_choice.hpp"
#include "models/dependent_rounds.hpp"
#include "models/rank_traffic.hpp"
#include "models/sync_model.hpp"

#include <cmath>
#include <cstdint>
#include <tuple>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::sim::detail {

using models::TrafficCounters;

struct QueuedComm {
  models::CommRequest request;
  int iteration = 0;
  double submit_s = 0;  // simulated time of the submit (the compute actor sleeps lazily)
};

/// Per-worker state shared by its compute actor and its communication-stream actor.
struct WorkerState {
  std::deque<QueuedComm> queue;
  int outstanding = 0;                                     // submitted and not finished
  bool waiting = false;
  std::int64_t submitted = 0;    // requests queued on the stream so far
  std::int64_t finished = 0;     // of which finished (in order: the stream is FIFO)
  std::int64_t wait_target = 0;  // the compute actor waits until `finished` reaches it
  std::map<int, std::int64_t> bucket_seq;  // per bucket: the `submitted` count its last request made
  /// Analytic fidelity: when the stream is free of what earlier rounds resolved, and which round of
  /// which iteration this worker posts to next (a sharded iteration waits several times).
  double stream_free_s = 0;
  int round_iteration = -1;
  int round_seq = 0;
  std::vector<QueuedComm> analytic_pending;  // analytic fidelity: all-reduces resolved at wait_comm
  /// Analytic fidelity: what this rank sends per all-reduce, by bucket (the last one it ran), and
  /// every one it ran (a rotated root or another collective or size in a later iteration).
  struct AnalyticTraffic {
    int me = -1;  // rank in the rotated schedule
    const models::Collective* algorithm = nullptr;
    double bytes = -1;
    TrafficCounters traffic;
  };
  std::vector<AnalyticTraffic> analytic_traffic;
  std::map<std::tuple<int, int, const models::Collective*, double>, TrafficCounters> analytic_traffic_seen;
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
};

/// The per-iteration records still open (engine/records.cpp): each worker's, from the oldest
/// iteration some worker has not ended yet.
struct OpenRecords {
  int first = 0;                                       // the oldest open iteration
  std::vector<std::deque<IterationRecord>> by_worker;  // [rank][iteration - first]
  std::deque<int> ended;                               // per open iteration: workers that have ended it
  std::map<int, std::string> collectives;              // per open iteration: what its gradients ran (worker 0's calls)
  // Kept between iterations, so that completing one allocates nothing: the rows being completed,
  // and the per-bucket vectors of rows a sink has written, for the records begun next.
  std::vector<IterationRecord> completed;
  std::vector<std::vector<double>> spare;
};

/// The engine-neutral state of one simulation run: what both engines share (the fiber lane runs on
/// it alone; the SimGrid engine's Context adds its handles, engine/context.hpp). Either engine
/// runs one worker at a time in one thread, so plain containers are safe here.
struct RunState {
  const Scenario* scenario = nullptr;
  models::TrainingPlan plan;
  models::CollectiveGroup group;
  models::AlphaBeta ab;
  std::unique_ptr<AnalyticNetwork> network;          // alpha and beta over time (analytic fidelity)
  std::unique_ptr<AnalyticLinks> analytic_links;     // analytic fidelity: the collectives' link bytes
  std::shared_ptr<const models::LogicalGraph> graph;  // the sync model's logical graph, if it has one
  std::vector<WorkerState> workers;
  std::vector<std::deque<double>> collective_jobs;   // per server: collectives (bytes) it must serve
  std::map<std::pair<int, int>, AnalyticRound> rounds;  // analytic fidelity, by iteration and round in it
  std::unique_ptr<AdaptiveRun> adaptive;             // training.adaptive_compression
  std::map<int, models::AlphaBeta> iteration_ab;     // flow fidelity under link traces: "auto"'s network, by iteration
  std::map<int, double> iteration_pick_s;            // ... and when it was taken
  /// Under link traces on a platform with a contention estimate: a group per distinct set of link
  /// values, its estimate pricing the links as they were then (resolution_group).
  std::map<std::vector<double>, std::unique_ptr<models::CollectiveGroup>> traced_groups;
  std::vector<double> launch_wait_s;                 // per bucket: submit to launch (Horovod's cycle); empty: none
  const RunOptions* options = nullptr;
  const double* fiber_clock_s = nullptr;  // the fiber lane's clock (engine/fiber_lane.cpp); null: engine_clock's
  double (*engine_clock)() = nullptr;     // the SimGrid engine's clock (engine/context.hpp sets it)
  /// The fiber lane's classes of identical workers (engine/worker_classes.hpp); null: every worker
  /// is simulated, and slots are ranks.
  std::unique_ptr<WorkerClasses> classes;
  OpenRecords records;
  double static_cr = 1;            // the fraction of gradient elements the scenario's compressor sends
  std::vector<double> variant_cr;  // adaptive compression: the same per candidate
  SimulationResult result;

  [[nodiscard]] bool analytic() const { return scenario->network.fidelity == Fidelity::ANALYTIC; }
  /// Simulated time now, under whichever engine runs the scenario.
  [[nodiscard]] double now_s() const { return fiber_clock_s != nullptr ? *fiber_clock_s : engine_clock(); }
  /// The workers simulated one by one: `workers`, `records.by_worker` and the rounds count them.
  [[nodiscard]] int simulated_workers() const {
    return classes ? static_cast<int>(classes->simulated().size()) : group.workers;
  }
  /// Where simulated worker `rank`'s state and records are: its rank, or its slot among the classes.
  [[nodiscard]] int slot(int rank) const { return classes ? classes->slot(rank) : rank; }
  [[nodiscard]] bool stepwise() const { return scenario->network.granularity == Granularity::STEPWISE; }
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
  /// RunStopped (engine/run_control.hpp) if RunOptions::stop_requested says so.
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
  /// What the gradient collective runs for a call of `bytes` among all workers in `iteration`,
  /// starting at `t`, and its name in the records: on a constant network without adaptive
  /// compression, what the plan resolved at load (RunPlan::gradient_collective); else the pick with
  /// resolution_ab and resolution_group at that moment.
  const models::Collective& gradient_collective(int iteration, double t, double bytes);
  /// What request `request` of `iteration` starting at `t` runs: the plan's all-gather or
  /// reduce-scatter (sharded data parallelism), else gradient_collective.
  const models::Collective& request_collective(const models::CommRequest& request, int iteration, double t);
  std::string gradient_collective_name(int iteration, double t, double bytes);
  /// request_collective's name in the records.
  std::string request_collective_name(const models::CommRequest& request, int iteration, double t);
  /// Records that `iteration` ran its gradient collective with `name` (worker 0's calls).
  void note_collective(int iteration, const std::string& name);
};

/// Everything of a run that neither engine needs to build: the plan (buckets, compression,
/// roots), the collective group, the analytic network, per-worker state and records; then
/// options.before_run (engine/simulation.cpp).
void prepare_context(RunState& ctx, const Scenario& scenario, const RunOptions& options);

/// The fixed cost of one collective call (launch and handshake); a collective
/// among a single rank is no call at all.
/// A compressor's dependent rounds are one call each (models/dependent_rounds.hpp).
/// The protocol the call runs with and its fixed cost (models/protocol_choice.hpp: the `nccl`
/// preset picks per call on the network `ab`; every other preset is itself).
inline models::CallProtocol call_protocol(const RunState& ctx, const models::Collective& algo, double bytes,
                                          const models::AlphaBeta& ab) {
  const auto& net = ctx.scenario->network;
  auto cp = models::call_protocol(algo, ctx.group, bytes, ab, net.collective_call_s, net.collective_call_given);
  cp.call_cost_s = ctx.group.workers > 1 || algo.uses_servers() ? cp.call_cost_s * models::collective_calls(algo, bytes)
                                                                : 0.0;
  return cp;
}

inline void add_traffic(const TrafficCounters& c, double& bytes, std::int64_t& messages) {
  bytes += c.bytes_sent;
  messages += c.messages_sent;
}

/// A request's kind as the timeline's category ("allreduce", "allgather", ...).
const char* request_category(models::CommRequest::Kind kind);

/// The ranks of a schedule rotated so that `root` plays rank 0 (empty for root 0: as is).
std::vector<int> rotation(int workers, int root);

// ---- framework bucketing and concurrent collectives (engine/concurrent_comm.cpp) ----
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
std::vector<AnalyticSpan> concurrent_spans(RunState& ctx, const std::vector<QueuedComm>& pending,
                                           const std::vector<double>& arrival);

/// After a run that was not stopped: every record must have been completed.
void check_records_complete(const RunState& ctx);

/// Per edge of the topology (boost::edges order): its UP half's (from, to) and the wire bytes each
/// half carried, as the SimGrid engine counted them (engine/link_bytes.hpp: link_halves); a half
/// without a SimGrid link is left out of links.csv.
struct LinkHalves {
  std::vector<std::pair<platforms::Vertex, platforms::Vertex>> up;
  std::vector<std::optional<double>> up_bytes, down_bytes;
};
/// Per-link bytes and utilisation: `halves` (null: the fiber lane, where nothing flows: every
/// link's two directions with 0 bytes) plus `analytic`, the analytic collectives' bytes per directed
/// link (AnalyticLinks::bytes), or null.
void collect_links(SimulationResult& result, const platforms::Topology& topo, const LinkHalves* halves,
                   const std::vector<double>* analytic);

}  // namespace ddlsim::sim::detail
