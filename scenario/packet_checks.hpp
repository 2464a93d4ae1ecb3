// ddlsim: packet fidelity's refusals shared by `run` (the scenario) and `collectives` (options).
#pragma once

#include "scenario/scenario.hpp"

#include <string>

namespace ddlsim::sim {

/// Where packet fidelity's refusals point: the scenario's JSON paths, or a command's options.
struct PacketCheckPaths {
  std::string model, software, routing;
};

/// Refuses what ns-3 under SimGrid's binding cannot carry (scenario/scenario_checks.cpp): a flow
/// network model, multipath routing, software costs with a header factor or handshakes.
void check_packet_network(const NetworkSpec& net, platforms::Routing routing, const PacketCheckPaths& paths);

}  // namespace ddlsim::sim
