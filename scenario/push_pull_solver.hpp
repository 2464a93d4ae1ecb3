// ddlsim: whether a run's parameter-server pushes and pulls can share the links on the fluid links
// (engine/fluid_ps.hpp) rather than on SimGrid's LMM, as far as the scenario alone tells: the
// engine adds what only it sees (SimGrid options, the routes).
#pragma once

#include "scenario/scenario.hpp"

#include <string>

namespace ddlsim::sim {

/// Empty when the scenario allows the fluid links for its pushes and pulls, else why not (the words
/// summary.json's push_pull_solver_reason gives).
std::string push_pull_fluid_refusal(const Scenario& scenario);

}  // namespace ddlsim::sim
