// ddlsim: creating the SimGrid engine with a scenario's network model.
//
// Order matters in SimGrid 3.32: create the Engine, then set its
// configuration, then build the platform.
#pragma once

#include "engine/run_control.hpp"
#include "scenario/scenario.hpp"

#include <exception>
#include <memory>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace ddlsim::sim {

/// Thrown by the actor that completes an iteration when the run is to stop there
/// (RunOptions::stop_requested): guard() ends the run cleanly.

/// Creates the engine (SimGrid's own flags in `engine_args`, e.g. --cfg=... --log=...),
/// silences SimGrid's configuration chatter unless --log says otherwise, and applies `network`.
/// Also connects a deadlock detector: check deadlocked() after run().
class EngineSession {
 public:
  EngineSession(const std::vector<std::string>& engine_args, const NetworkSpec& network);
  simgrid::s4u::Engine& engine() { return *engine_; }

  /// Makes room for `per_worker` actors per worker plus `fixed` others before
  /// any is created. Each actor's stack is one memory mapping, two with a
  /// guard page (SimGrid's default), and a process may hold vm.max_map_count
  /// mappings: past that SimGrid aborts. If the actors fit only without guard
  /// pages, guard pages are turned off and the returned note says so; if they do not fit at
  /// all, their stacks are carved from the heap (malloc's mmap turned off for the process) and
  /// the note says so. Under AddressSanitizer (actors on threads) that last case throws
  /// ConfigError at /platform/workers naming the limit and the largest worker count that fits.
  [[nodiscard]] std::string reserve_actors(int workers, int per_worker, int fixed);
  [[nodiscard]] bool deadlocked() const { return *deadlock_; }
  /// engine().run(), stopped where it is once a signal's grace has passed (engine/run_control.hpp):
  /// maestro checks at every step of simulated time and leaves the loop, whatever the actors
  /// wait on. Returns true then: the actors stay blocked mid-iteration, and SimGrid can neither
  /// kill them (a comm whose receiver never came crashes its link-load plugin) nor destroy what
  /// they wait on, so the caller keeps the engine and everything the actors use alive until the
  /// process exits (SimulationResult::engine_abandoned).
  bool run_stoppable();
  [[nodiscard]] bool stopped() const { return stopped_; }

  /// Wraps an actor body: an exception escaping it (SimGrid would abort the
  /// process) is kept, every actor is killed so run() returns, and
  /// rethrow_if_failed() rethrows it after the run. RunStopped kills every
  /// actor the same way, and stopped() says so.
  template <class F>
  auto guard(F body) {
    return [this, body = std::move(body)]() mutable {
      try {
        body();
      } catch (const simgrid::ForcefulKillException&) {
        throw;  // SimGrid's own unwinding of killed actors
      } catch (const RunStopped&) {
        stopped_ = true;
        simgrid::s4u::Actor::kill_all();
      } catch (...) {
        if (!failure_) failure_ = std::current_exception();
        simgrid::s4u::Actor::kill_all();
      }
    };
  }
  void rethrow_if_failed() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::shared_ptr<bool> deadlock_ = std::make_shared<bool>(false);
  std::exception_ptr failure_;
  bool stopped_ = false;
};

}  // namespace ddlsim::sim
