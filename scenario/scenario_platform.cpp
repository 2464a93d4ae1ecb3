// ddlsim: the scenario's "platform" section: the topology built by its registered builder for the
// workers and servers, connected, every link within range (docs/scenario.md).
#include "scenario/sections.hpp"

#include "models/units.hpp"

#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>

namespace ddlsim::sim {

void check_link_ranges(const platforms::Topology& topo, const std::string& path) {
  for (auto e : boost::make_iterator_range(boost::edges(topo.graph))) {
    const auto& link = topo.graph[e];
    if (link.bandwidth_Bps < units::MIN_BANDWIDTH_BPS || link.bandwidth_Bps > units::MAX_BANDWIDTH_BPS)
      throw ConfigError(path, fmt::format("link \"{}\" would have a bandwidth of {:g} B/s, outside {}",
                                                        excerpt(link.name), link.bandwidth_Bps, units::bandwidth_range()));
    if (link.latency_s > units::MAX_LATENCY_S)
      throw ConfigError(path, fmt::format("link \"{}\" would have a latency of {:g} s, outside {}",
                                                        excerpt(link.name), link.latency_s,
                                                        units::time_range(units::MAX_LATENCY_S)));
  }
}

namespace {

platforms::LinkSpec read_link(ObjectReader& parent) {
  ObjectReader link = parent.object("link");
  platforms::LinkSpec spec;
  spec.bandwidth_Bps = link.bandwidth_Bps("bandwidth", 25e9 / 8);
  spec.latency_s = link.latency_s("latency", 1e-6);
  link.finish();
  return spec;
}

}  // namespace

void read_platform(ObjectReader& root, Scenario& s) {
  ObjectReader p = root.object("platform");
  s.platform.topology = p.string("topology", "star");
  platforms::TopologyRegistry::instance().check_name(s.platform.topology, "/platform/topology", "topology");
  s.platform.workers = static_cast<int>(p.integer("workers", 8, 1, MAX_WORKERS));
  s.platform.parameter_servers = static_cast<int>(p.integer("parameter_servers", 0, 0, MAX_WORKERS));
  s.platform.link = read_link(p);
  s.platform.routing = platforms::parse_routing(p.choice(
      "routing", platforms::routing_names(), platforms::to_string(platforms::default_routing(s.platform.topology))));
  json params = json::object();
  if (const json* v = p.find("params")) params = *v;
  p.finish();
  auto builder = platforms::TopologyRegistry::instance().create(s.platform.topology, params, "/platform/topology",
                                                                "/platform/params", "topology");
  platforms::BuildRequest request;
  request.workers = s.platform.workers;
  request.parameter_servers = s.platform.parameter_servers;
  request.link = s.platform.link;
  s.platform.graph = builder->build(request);
  platforms::check_connected(s.platform.graph, "/platform/params");
  check_link_ranges(s.platform.graph, "/platform/params");
  check_gpus_per_node(s.platform.graph, s.platform.workers, params.is_object() && params.contains("gpus_per_node"),
                      "/platform/params/gpus_per_node");
}

}  // namespace ddlsim::sim
