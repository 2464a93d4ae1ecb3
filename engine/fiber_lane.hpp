// ddlsim: the analytic fiber lane -- analytic fidelity without SimGrid.
//
// At analytic fidelity a scenario whose workers only compute and all-reduce among all workers
// (no parameter servers, no point-to-point or logical graph, no subgroup all-reduces, no
// adaptive compression) needs no network simulation: every collective is a closed form resolved
// at one rendezvous per iteration (engine/lazy_runtime.hpp). The fiber lane runs such a scenario's
// unchanged sync model (SyncModel::run_worker) on one Boost.Context fiber per worker, driven by
// a plain event queue of wake-up times, instead of two SimGrid actors per worker: no simcalls,
// no per-actor memory mapping, no stream actors. Results equal the SimGrid lane's (a test
// compares both); every other scenario runs on SimGrid as before.
#pragma once

#include "scenario/run_plan.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <string>

namespace ddlsim::sim::detail {

/// Runs `scenario` (fiber_lane_applies) on fibers. Throws what the SimGrid lane throws.
SimulationResult simulate_on_fibers(const Scenario& scenario, const RunOptions& options);

/// Bytes of stack each fiber gets (one shared mapping, committed only as touched).
inline constexpr std::size_t FIBER_STACK_BYTES = 256 * 1024;

}  // namespace ddlsim::sim::detail
