// ddlsim: turns a TopologyGraph into a SimGrid 3.32 platform.
//
// The one file that changes when SimGrid's platform API changes (3.32's
// create_*_zone versus 4.x's add_netzone_*). Every graph edge becomes a
// split-duplex link (independent directions, as a full-duplex NIC or cable).
// A graph that is one switch with every host on it becomes a StarZone (O(1)
// routes; every routing gives the same paths there). Otherwise, with
// Routing::SHORTEST, one Dijkstra zone (with route cache) holding every host
// and switch, each edge a one-hop route, so SimGrid routes along shortest paths
// in hops (platforms/routing.hpp reproduces its tie-breaking); with ECMP or
// D-mod-k, a zone of our own (a NetZoneImpl whose get_local_route asks a
// platforms::RouteTable), holding only the hosts: routes are computed when a
// communication first needs them, never stored as an N x N table, so no host
// count is too large. Bandwidths are multiplied by `byte_scale` because payload
// sizes are integers: sim/ sends round(bytes * byte_scale) units, so fractional
// bytes keep their timing.
#pragma once

#include "platforms/routing.hpp"
#include "platforms/topology.hpp"

#include <simgrid/s4u.hpp>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace ddlsim::platforms {

struct EmittedPlatform {
  std::vector<simgrid::s4u::Host*> hosts;  // workers by rank, then servers by index
  std::vector<simgrid::s4u::Link*> links;  // one per graph edge, in edge order
  std::vector<std::pair<Vertex, Vertex>> up;  // per link: the (from, to) of its UP half: (boost::source, boost::target)
};

/// Called for every link before it is sealed (SimGrid refuses bandwidth and
/// latency profiles on sealed links).
using LinkConfigurator = std::function<void(const Edge& edge, simgrid::s4u::Link* link)>;

/// Must be called after the Engine exists and its network model is configured.
/// `seed` only matters to Routing::ECMP (the flow hash).
EmittedPlatform emit_platform(const Topology& topology, double byte_scale, const LinkConfigurator& configure = {},
                              Routing routing = Routing::SHORTEST, std::uint64_t seed = 0);

}  // namespace ddlsim::platforms
