#include "engine/s4u_emitter.hpp"

#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>
#include <memory>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <stdexcept>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::platforms {

namespace {

sg4::SplitDuplexLink* make_link(sg4::NetZone* zone, const Graph& g, const Edge& e, double byte_scale,
                                const LinkConfigurator& configure) {
  const EdgeProps& edge = g[e];
  sg4::SplitDuplexLink* link = zone->create_split_duplex_link(edge.name, edge.bandwidth_Bps * byte_scale);
  link->set_latency(edge.latency_s);
  if (configure) configure(e, link);
  link->seal();
  return link;
}

/// A single-switch star as SimGrid's StarZone: a route is the source's link
/// (up) then the destination's link (down), found in O(1). A Dijkstra zone
/// would scan the switch's N edges on every route lookup. As everywhere, a
/// link's UP half runs from its boost::source to its boost::target (host to
/// switch for the star builder; a custom graph may list the switch first).
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
    const bool host_first = g[boost::source(e, g)].kind != NodeKind::SWITCH;
    const auto host = host_first ? boost::source(e, g) : boost::target(e, g);
    out.up.emplace_back(boost::source(e, g), boost::target(e, g));
    zone->add_route(host_of[host]->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, host_first ? sg4::LinkInRoute::Direction::UP
                                                       : sg4::LinkInRoute::Direction::DOWN)},
                    true);
  }
  zone->seal();
  for (auto v : topology.workers) out.hosts.push_back(host_of[v]);
  for (auto v : topology.servers) out.hosts.push_back(host_of[v]);
  return out;
}

/// A zone whose routes come from a RouteTable (ECMP, D-mod-k). Only hosts are
/// netpoints; switches exist only inside the table. SimGrid asks for a route
/// whenever a communication starts: the table walks it in O(hops * degree)
/// (its per-destination distances are built on first use), so nothing of size
/// hosts x hosts is ever stored. A hop along its link's boost::source ->
/// boost::target uses the link's UP half, as the Dijkstra zone does.
class TableZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  TableZone(const std::string& name, std::unique_ptr<const RouteTable> table)
      : NetZoneImpl(name), table_(std::move(table)) {}

  /// host_slots[netpoint id] = slot (-1: not a host); halves[link] = {UP, DOWN}.
  void bind(std::vector<int> host_slots, std::vector<std::pair<sg4::Link*, sg4::Link*>> halves) {
    slot_of_ = std::move(host_slots);
    halves_ = std::move(halves);
  }

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override {
    thread_local std::vector<Hop> hops;  // actors may ask (Host::route_to) from parallel contexts
    table_->route(slot(src), slot(dst), hops);
    for (const Hop& hop : hops) {
      sg4::Link* link = hop.forward ? halves_[hop.edge].first : halves_[hop.edge].second;
      into->link_list_.push_back(link->get_impl());
      if (latency != nullptr) *latency += link->get_latency();
    }
  }

 private:
  int slot(const simgrid::kernel::routing::NetPoint* point) const {
    const auto id = point->id();
    if (id >= slot_of_.size() || slot_of_[id] < 0)
      throw std::logic_error(fmt::format("ddlsim routing zone: \"{}\" is not one of its hosts", point->get_name()));
    return slot_of_[id];
  }

  std::unique_ptr<const RouteTable> table_;
  std::vector<int> slot_of_;
  std::vector<std::pair<sg4::Link*, sg4::Link*>> halves_;
};

EmittedPlatform emit_table(const Topology& topology, double byte_scale, const LinkConfigurator& configure,
                           Routing routing, std::uint64_t seed) {
  const Graph& g = topology.graph;
  auto* impl = new TableZone("ddlsim", std::make_unique<const RouteTable>(topology, routing, seed));  // owned by SimGrid
  sg4::NetZone* zone = impl->get_iface();
  std::vector<sg4::Host*> host_of(boost::num_vertices(g), nullptr);
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].kind != NodeKind::SWITCH) host_of[v] = zone->create_host(g[v].name, 1e9)->seal();
  EmittedPlatform out;
  std::vector<std::pair<sg4::Link*, sg4::Link*>> halves;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    sg4::SplitDuplexLink* link = make_link(zone, g, e, byte_scale, configure);
    out.links.push_back(link);
    out.up.emplace_back(boost::source(e, g), boost::target(e, g));
    halves.emplace_back(link->get_link_up(), link->get_link_down());
  }
  for (auto v : topology.workers) out.hosts.push_back(host_of[v]);
  for (auto v : topology.servers) out.hosts.push_back(host_of[v]);
  std::vector<int> slots;
  for (std::size_t s = 0; s < out.hosts.size(); ++s) {
    const auto id = out.hosts[s]->get_netpoint()->id();
    if (slots.size() <= id) slots.resize(id + 1, -1);
    slots[id] = static_cast<int>(s);
  }
  impl->bind(std::move(slots), std::move(halves));
  zone->seal();
  return out;
}

}  // namespace

EmittedPlatform emit_platform(const Topology& topology, double byte_scale, const LinkConfigurator& configure,
                              Routing routing, std::uint64_t seed) {
  const Graph& g = topology.graph;
  // SimGrid's ns-3 binding builds ns-3's links from one-hop routes between two netpoints, and
  // ignores a StarZone's routes and any zone's longer ones: under ns-3 every topology is the
  // Dijkstra zone below, switches as routers, and ns-3 routes the packets itself.
  const bool ns3 = simgrid::config::get_value<std::string>("network/model") == "ns-3";
  if (ns3 && routing != Routing::SHORTEST)
    throw std::invalid_argument("routing \"" + to_string(routing) + "\" under ns-3: only shortest paths");
  if (is_single_switch_star(g) && !ns3) return emit_star(topology, byte_scale, configure);
  if (routing != Routing::SHORTEST) return emit_table(topology, byte_scale, configure, routing, seed);
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
