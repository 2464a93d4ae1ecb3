// ddlsim: the SimGrid engine's state of one simulation run, and the actors that use it.
//
// Internal to engine/: simulation.cpp builds a Context (the engine-neutral RunState,
// engine/run_state.hpp, plus the SimGrid handles) and starts the actors; worker_runtime.cpp holds
// each worker's compute actor (the Runtime facade the sync model runs against) and communication
// stream; servers.cpp the parameter servers; records.cpp the open per-iteration records.
// SimGrid runs actors one at a time in one thread (contexts/nthreads=1), so the plain containers
// here are safe.
#pragma once

#include "engine/engine.hpp"
#include "engine/fluid_ps.hpp"
#include "engine/point_to_point.hpp"
#include "engine/run_state.hpp"
#include "engine/s4u_emitter.hpp"
#include "engine/schedule_executor.hpp"

#include <map>
#include <memory>
#include <tuple>
#include <simgrid/s4u.hpp>
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

/// A worker's SimGrid handles: its communication stream's semaphores.
struct SimWorker {
  sg4::SemaphorePtr queued;   // a request is on the queue
  sg4::SemaphorePtr drained;  // released once when a waiter waits for the stream
};

/// The SimGrid engine's state of one run: the RunState and the engine's handles.
struct Context : RunState {
  Context() { engine_clock = &sg4::Engine::get_clock; }
  platforms::EmittedPlatform platform;
  std::unique_ptr<ScheduleExecutor> executor;
  /// Point to point: per (source, destination, tag), the receiver-ready notices (engine/point_to_point.hpp).
  std::map<std::tuple<int, int, int>, ReadyNotices> ready_notices;
  sg4::BarrierPtr comm_barrier;                        // analytic fidelity: all communication streams
  sg4::BarrierPtr end_barrier;                         // models with a logical graph: all workers, at the end
  sg4::BarrierPtr adaptive_barrier;                    // adaptive compression: all workers, at each choice
  std::vector<SimWorker> sim_workers;                  // per worker (RunState::workers holds the rest)
  std::vector<sg4::SemaphorePtr> collective_ready;     // per server: a collective to serve (collective_server)
  std::vector<std::vector<sg4::Mailbox*>> push_boxes;  // per server, per worker
  std::unique_ptr<FluidPs> fluid_ps;                   // pushes and pulls on the fluid links (null: mailboxes)
  sg4::Mailbox* pull_box(int server, int worker) {
    return sg4::Mailbox::by_name(fmt::format("pull:{}>{}", server, worker));
  }
};

/// Adaptive compression: the candidate ratio `iteration` runs, decided by the first worker
/// that starts it at `now_s` (at a choice, after every worker has reported; engine/adaptive_run.cpp).
int adaptive_variant(Context& ctx, int iteration, double now_s);

inline std::uint64_t units_of(double bytes) { return static_cast<std::uint64_t>(std::llround(bytes * byte_scale())); }

/// The units a point-to-point message of `bytes` from rank `src` to rank `dst` (gossip, puts, pushes,
/// pulls; servers after the workers) puts on the wire: the library's protocol efficiency applies to it
/// as to a collective's messages (engine/schedule_executor.cpp). Counts them in links.csv (engine/link_bytes.hpp).
std::uint64_t wire_units(const Context& ctx, int src, int dst, double bytes);

/// The compute actor of worker `rank`: the sync model's worker loop on a SimRuntime.
void run_worker(Context& ctx, int rank, const models::SyncModel& sync);

/// One of worker `rank`'s communication-stream actors (`slot` of training.bucketing.max_inflight):
/// together they take the worker's requests in order, each running one at a time (daemon).
void comm_stream(Context& ctx, int rank, int slot);

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

/// Parameter server `server`: the sync model's server loop on a SimServerRuntime.
void run_server(Context& ctx, int server, const models::SyncModel& sync);
/// A parameter server's side of collectives that use servers (e.g. "ps") (daemon).
void collective_server(Context& ctx, int server);

/// What links.csv needs of the emitted platform: each link's halves and the bytes they carried.
LinkHalves link_halves(const platforms::EmittedPlatform& platform);

}  // namespace ddlsim::sim::detail
