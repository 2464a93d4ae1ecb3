#include "platforms/s4u_emitter.hpp"

#include <boost/graph/graph_traits.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::platforms {

EmittedPlatform emit_platform(const Topology& topology, double byte_scale) {
  const Graph& g = topology.graph;
  auto* zone = sg4::create_dijkstra_zone("ddlsim", true);
  std::vector<simgrid::kernel::routing::NetPoint*> points(boost::num_vertices(g), nullptr);
  std::vector<sg4::Host*> host_of(boost::num_vertices(g), nullptr);
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const NodeProps& node = g[v];
    if (node.kind == NodeKind::SWITCH) {
      points[v] = zone->create_router(node.name);
    } else {
      // Compute is replayed as durations, so the host speed only matters to SimGrid itself.
      host_of[v] = zone->create_host(node.name, 1e9)->seal();
      points[v] = host_of[v]->get_netpoint();
    }
  }
  EmittedPlatform out;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const EdgeProps& edge = g[e];
    sg4::Link* link = zone->create_split_duplex_link(edge.name, edge.bandwidth_Bps * byte_scale)
                          ->set_latency(edge.latency_s)
                          ->seal();
    out.links.push_back(link);
    zone->add_route(points[boost::source(e, g)], points[boost::target(e, g)], nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
  }
  zone->seal();
  for (auto v : topology.workers) out.hosts.push_back(host_of[v]);
  for (auto v : topology.servers) out.hosts.push_back(host_of[v]);
  return out;
}

}  // namespace ddlsim::platforms
