// ddlsim: ranks' lockstep schedules replayed in event order without SimGrid's actors, where no two
// of their transfers ever share a link at once (issue: flow fidelity at scale).
//
// ScheduleExecutor::run gives every message a SimGrid actor switch, a mailbox match and an LMM
// solve: about 5 us each, 11 s for the 2.1 million messages of a stepwise ring all-reduce on 1,024
// ranks. When every link carries at most one transfer at a time, the sharing is trivial: CM02 gives
// a lone flow the rate min(its rate cap, the slowest link of its route x the model's bandwidth
// factor) after the route's latency x the latency factor, so every transfer's end is known when it
// starts. The replay runs the executor's program on those ends -- a rank posts a step's sends and
// receives together, a transfer starts when both ends are posted (FIFO per ordered pair, as the
// mailboxes match), the step ends when its last transfer does, then the rank sleeps the step's
// latency terms -- and checks, as each transfer starts (in time order), that no link of its route is
// still busy with another (a link is busy from a transfer's start to its end, latency included:
// stricter than CM02, which shares bandwidth only after the latency). The first overlap, a windowed
// step (gloo's ring), or ranks that cannot all finish give the run back to SimGrid: the replay is
// used only where it is the same computation (tests/engine/stepwise_replay_test.cpp compares them).
#pragma once

#include "engine/schedule_executor.hpp"
#include "models/rank_steps.hpp"
#include "models/software_cost.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct ReplayRank {
  std::unique_ptr<models::StepSource> steps;  // null: the rank takes no part
  double start_s = 0;                         // when it posts its first step
  const models::SoftwareCost* software = nullptr;  // the call's protocol, else the network's (as run())
};

struct ReplayResult {
  bool replayed = false;  // false: SimGrid must run it; `why` says why
  std::string why;
  double end_s = 0;         // when the last rank finished its last step
  std::int64_t flows = 0;   // transfers (messages) replayed
};

/// Replays `ranks` (indexed by rank, hosts as `executor`'s) on the executor's platform, without
/// running the SimGrid engine (its links are read: routes, latencies, bandwidths). Only for the
/// CM02 models without a TCP window and without link traces (the caller checks, with
/// cm02_refusal in engine/flow_bounds.hpp): a lone flow's
/// time is then latency + units / rate.
ReplayResult replay_stepwise(ScheduleExecutor& executor, std::vector<ReplayRank>& ranks);

}  // namespace ddlsim::sim
