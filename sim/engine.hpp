// ddlsim: creating the SimGrid engine with a scenario's network model.
//
// Order matters in SimGrid 3.32: create the Engine, then set its
// configuration, then build the platform.
#pragma once

#include "sim/scenario.hpp"

#include <exception>
#include <memory>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace ddlsim::sim {

/// Creates the engine (SimGrid's own flags in `engine_args`, e.g. --cfg=... --log=...),
/// silences SimGrid's configuration chatter unless --log says otherwise, and applies `network`.
/// Also connects a deadlock detector: check deadlocked() after run().
class EngineSession {
 public:
  EngineSession(const std::vector<std::string>& engine_args, const NetworkSpec& network);
  simgrid::s4u::Engine& engine() { return *engine_; }
  [[nodiscard]] bool deadlocked() const { return *deadlock_; }

  /// Wraps an actor body: an exception escaping it (SimGrid would abort the
  /// process) is kept, every actor is killed so run() returns, and
  /// rethrow_if_failed() rethrows it after the run.
  template <class F>
  auto guard(F body) {
    return [this, body = std::move(body)]() mutable {
      try {
        body();
      } catch (const simgrid::ForcefulKillException&) {
        throw;  // SimGrid's own unwinding of killed actors
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
};

}  // namespace ddlsim::sim
