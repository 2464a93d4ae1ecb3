#include "platforms/s4u_emitter.hpp"

#include <boost/graph/graph_traits.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::platforms {

namespace {

/// True when the graph is one switch with every host attached to it and nothing else.
bool is_single_switch_star(const Graph& g) {
  int switches = 0;
  Vertex center = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].kind == NodeKind::SWITCH) {
      ++switches;
      center = v;
    }
  return switches == 1 && boost::num_edges(g) + 1 == boost::num_vertices(g) &&
         boost::out_degree(center, g) == boost::num_edges(g);
}

/// A single-switch star as SimGrid's StarZone: a route is the source's link
/// (up) then the destination's link (down), found in O(1). A Dijkstra zone
/// would scan the switch's N edges on every route lookup.
sg4::Link* make_link(sg4::NetZone* zone, const Graph& g, const Edge& e, double byte_scale,
                     const LinkConfigurator& configure) {
  const EdgeProps& edge = g[e];
  sg4::Link* link = zone->create_split_duplex_link(edge.name, edge.bandwidth_Bps * byte_scale)->set_latency(edge.latency_s);
  if (configure) configure(e, link);
  return link->seal();
}

EmittedPlatform emit_star(const Topology& topology, double byte_scale, const LinkConfigurator& configure) {
  const Graph& g = topology.graph;
  auto* zone = sg4::create_star_zone("ddlsim");
  std::vector<sg4::Host*> host_of(boost::num_vertices(g), nullptr);
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].kind != NodeKind::SWITCH) host_of[v] = zone->create_host(g[v].name, 1e9)->seal();
  EmittedPlatform out;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    sg4::Link* link = make_link(zone, g, e, byte_scale, configure);
    out.links.push_back(link);
    auto host = g[boost::source(e, g)].kind == NodeKind::SWITCH ? boost::target(e, g) : boost::source(e, g);
    out.up.emplace_back(host, host == boost::source(e, g) ? boost::target(e, g) : boost::source(e, g));
    zone->add_route(host_of[host]->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
  }
  zone->seal();
  for (auto v : topology.workers) out.hosts.push_back(host_of[v]);
  for (auto v : topology.servers) out.hosts.push_back(host_of[v]);
  return out;
}

}  // namespace

EmittedPlatform emit_platform(const Topology& topology, double byte_scale, const LinkConfigurator& configure) {
  const Graph& g = topology.graph;
  if (is_single_switch_star(g)) return emit_star(topology, byte_scale, configure);
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
    sg4::Link* link = make_link(zone, g, e, byte_scale, configure);
    out.links.push_back(link);
    out.up.emplace_back(boost::source(e, g), boost::target(e, g));
    zone->add_route(points[boost::source(e, g)], points[boost::target(e, g)], nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
  }
  zone->seal();
  for (auto v : topology.workers) out.hosts.push_back(host_of[v]);
  for (auto v : topology.servers) out.hosts.push_back(host_of[v]);
  return out;
}

}  // namespace ddlsim::platforms
