// ddlsim: SIGINT and SIGTERM.
//
// `ddlsim run` stops cleanly on the first signal: the handler only records it, the run stops
// once every worker has ended its current iteration (RunOptions::stop_requested, asked by
// engine/records.cpp) or, when that takes longer than STOP_GRACE_S of wall time, where it is (an
// alarm sets stop_now(), which the fiber lane checks at every event and SimGrid's maestro between
// two time steps: EngineSession::run_stoppable), and the outputs of the iterations completed so far are written, marked
// incomplete; the exit code is 128 + the signal (130, 143). A second signal exits at once with
// that code. The other commands exit at once on the first. SimGrid's engine installs its own
// SIGINT handler (exit 1), so EngineSession installs ours again once the engine exists.
// docs/reliability.md, "Signals".
#pragma once

#include <string>

namespace ddlsim::sim {

enum class StopMode {
  EXIT,      // exit at once with 128 + signal
  GRACEFUL,  // record the first signal (stop_signal()); exit at once on a second
};

/// Installs the handlers of SIGINT and SIGTERM in `mode` (again, if called again).
void install_stop_handlers(StopMode mode);
/// Installs them again in the mode last given, if they were installed (after SimGrid's engine
/// replaced SIGINT's).
void reinstall_stop_handlers();
/// The signal that asked the run to stop, or 0.
int stop_signal();
/// Wall seconds a run waits after the first signal for its current iteration to end.
inline constexpr unsigned STOP_GRACE_S = 2;
/// True once STOP_GRACE_S have passed since the first signal: the run stops within its iteration
/// (EngineSession::run_stoppable, the fiber lane's loop), losing only the iterations in progress.
bool stop_now();
/// A run stopped within an iteration left SimGrid's engine in place (SimulationResult::
/// engine_abandoned): main() ends the process with std::_Exit once the command has returned (its
/// outputs written, its staging folder gone), skipping the static destructors that would tear it down.
void exit_without_static_cleanup();
[[nodiscard]] bool static_cleanup_skipped();
/// "SIGINT", "SIGTERM".
std::string signal_name(int signal);

/// Thrown by the actor (or fiber) that completes an iteration when a stop was requested
/// (RunOptions::stop_requested): EngineSession::guard kills every actor on it, the fiber lane
/// unwinds every fiber (engine/engine.hpp, engine/fiber_lane.cpp).
struct RunStopped {};

}  // namespace ddlsim::sim
