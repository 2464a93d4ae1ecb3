// ddlsim: creating the SimGrid engine with a scenario's network model.
//
// Order matters in SimGrid 3.32: create the Engine, then set its
// configuration, then build the platform.
#pragma once

#include "sim/scenario.hpp"

#include <memory>
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

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::shared_ptr<bool> deadlock_ = std::make_shared<bool>(false);
};

}  // namespace ddlsim::sim
