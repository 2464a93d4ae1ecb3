// ddlsim: turns a TopologyGraph into a SimGrid 3.32 platform.
//
// The one file that changes when SimGrid's platform API changes (3.32's
// create_*_zone versus 4.x's add_netzone_*). A graph that is one switch with
// every host on it becomes a StarZone (O(1) routes); any other graph becomes
// one Dijkstra zone (with route cache) holding every host and switch; every graph edge becomes a split-duplex
// link (independent directions, as a full-duplex NIC or cable) and a one-hop
// route; SimGrid then routes along shortest paths in hops. Bandwidths are
// multiplied by `byte_scale` because payload sizes are integers: sim/ sends
// round(bytes * byte_scale) units, so fractional bytes keep their timing.
#pragma once

#include "platforms/topology.hpp"

#include <simgrid/s4u.hpp>
#include <functional>
#include <utility>
#include <vector>

namespace ddlsim::platforms {

struct EmittedPlatform {
  std::vector<simgrid::s4u::Host*> hosts;  // workers by rank, then servers by index
  std::vector<simgrid::s4u::Link*> links;  // one per graph edge, in edge order
  std::vector<std::pair<Vertex, Vertex>> up;  // per link: the (from, to) of its UP direction
};

/// Called for every link before it is sealed (SimGrid refuses bandwidth and
/// latency profiles on sealed links).
using LinkConfigurator = std::function<void(const Edge& edge, simgrid::s4u::Link* link)>;

/// Must be called after the Engine exists and its network model is configured.
EmittedPlatform emit_platform(const Topology& topology, double byte_scale, const LinkConfigurator& configure = {});

}  // namespace ddlsim::platforms
