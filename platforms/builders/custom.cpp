// Custom: an explicit graph given node by node and link by link.
//
// Parameters:
//   "nodes"  required array of {"name": string, "kind": "worker" | "server" |
//            "switch"}. Names are unique. Worker nodes get ranks in the order
//            they appear, servers likewise; there must be exactly
//            platform.workers workers and platform.parameter_servers servers.
//   "edges"  array (default empty) of {"a": name, "b": name, "bandwidth",
//            "latency"}; bandwidth and latency default to the platform link.
//            No self-loops, at most one edge per pair of nodes, and the graph
//            must be connected.
//
// Every node keeps its name: hosts, links ("a<->b", as `ddlsim platform
// --links` lists them and link traces name them) and links.csv use the user's
// names. Reference: a plain edge list, as in SimGrid's <link_ctn>
// routes or the Boost.Graph edge_list adaptor.
#include "platforms/topology.hpp"

#include <map>
#include <optional>
#include <set>

namespace ddlsim::platforms {
namespace {

struct CustomEdge {
  std::size_t a = 0;  // node indices
  std::size_t b = 0;
  std::optional<double> bandwidth_Bps;
  std::optional<double> latency_s;
};

struct CustomGraph {
  std::vector<std::string> names;
  std::vector<NodeKind> kinds;
  std::vector<CustomEdge> edges;
  int workers = 0;
  int servers = 0;
};

class CustomBuilder final : public TopologyBuilder {
 public:
  explicit CustomBuilder(CustomGraph spec) : spec_(std::move(spec)) {}

  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    const std::string nodes_path = request.params_path + "/nodes";
    if (spec_.workers != request.workers)
      throw ConfigError(nodes_path, fmt::format("the nodes list has {} worker nodes, but platform.workers is {}",
                                                spec_.workers, request.workers));
    if (spec_.servers != request.parameter_servers)
      throw ConfigError(nodes_path,
                        fmt::format("the nodes list has {} server nodes, but platform.parameter_servers is {}",
                                    spec_.servers, request.parameter_servers));

    Topology topo;
    topo.kind = "custom";
    add_hosts(topo, request);
    std::vector<Vertex> vertex;  // by node index
    std::size_t next_worker = 0, next_server = 0;
    for (std::size_t i = 0; i < spec_.names.size(); ++i) {
      switch (spec_.kinds[i]) {
        case NodeKind::WORKER:
          vertex.push_back(topo.workers[next_worker++]);
          break;
        case NodeKind::SERVER:
          vertex.push_back(topo.servers[next_server++]);
          break;
        case NodeKind::SWITCH:
          vertex.push_back(add_node(topo, spec_.names[i], NodeKind::SWITCH));
          break;
      }
      topo.graph[vertex.back()].name = spec_.names[i];
    }
    for (const CustomEdge& e : spec_.edges)
      add_link(
          topo, vertex[e.a], vertex[e.b],
          LinkSpec{e.bandwidth_Bps.value_or(request.link.bandwidth_Bps), e.latency_s.value_or(request.link.latency_s)});
    check_connected(topo, request.params_path + "/edges");
    return topo;
  }

 private:
  CustomGraph spec_;
};

const json& array_at(ObjectReader& params, const std::string& key, bool required) {
  static const json EMPTY = json::array();
  const json* value = required ? &params.require(key) : params.find(key);
  if (value == nullptr) return EMPTY;
  if (!value->is_array())
    throw ConfigError(params.path_of(key), fmt::format("expected an array, got {}", json_type_name(*value)));
  return *value;
}

CustomGraph read_custom(ObjectReader& params) {
  CustomGraph spec;
  std::map<std::string, std::size_t> index;
  const json& nodes = array_at(params, "nodes", true);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ObjectReader node(nodes[i], pointer_append(params.path_of("nodes"), std::to_string(i)));
    std::string name = node.required_string("name");
    if (name.empty()) throw ConfigError(node.path_of("name"), "node name must not be empty");
    if (!index.emplace(name, i).second)
      throw ConfigError(node.path_of("name"), fmt::format("duplicate node name \"{}\"", excerpt(name)));
    node.require("kind");
    std::string kind = node.choice("kind", {"worker", "server", "switch"}, "");
    node.finish();
    spec.names.push_back(name);
    spec.kinds.push_back(kind == "worker" ? NodeKind::WORKER : kind == "server" ? NodeKind::SERVER : NodeKind::SWITCH);
    if (kind == "worker") ++spec.workers;
    if (kind == "server") ++spec.servers;
  }

  std::map<std::pair<std::size_t, std::size_t>, std::string> seen;  // node pair -> path of its edge
  const json& edges = array_at(params, "edges", false);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    ObjectReader edge(edges[i], pointer_append(params.path_of("edges"), std::to_string(i)));
    auto end_of = [&](const std::string& key) {
      std::string name = edge.required_string(key);
      auto it = index.find(name);
      if (it == index.end()) throw ConfigError(edge.path_of(key), fmt::format("unknown node \"{}\"", excerpt(name)));
      return it->second;
    };
    CustomEdge e{end_of("a"), end_of("b"), {}, {}};
    if (e.a == e.b)
      throw ConfigError(edge.path(), fmt::format("self-loop: node \"{}\" is linked to itself", excerpt(spec.names[e.a])));
    auto [it, fresh] = seen.emplace(std::minmax(e.a, e.b), edge.path());
    if (!fresh)
      throw ConfigError(edge.path(), fmt::format("duplicate edge between \"{}\" and \"{}\" (also at {})",
                                                 excerpt(spec.names[e.a]), excerpt(spec.names[e.b]), it->second));
    if (edge.has("bandwidth")) e.bandwidth_Bps = edge.bandwidth_Bps("bandwidth", 0);
    if (edge.has("latency")) e.latency_s = edge.latency_s("latency", 0);
    edge.finish();
    spec.edges.push_back(e);
  }
  return spec;
}

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "custom",
                "explicit graph: params nodes [{name, kind}] and edges [{a, b, bandwidth, latency}]",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::platforms::CustomBuilder>(ddlsim::platforms::read_custom(params));
                })
