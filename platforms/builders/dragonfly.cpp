// Dragonfly: fully connected groups of routers, groups joined by global links.
//
// g groups of a routers "router-<group>-<r>"; each router has p host ports
// and h global ports. Routers of a group are fully connected (local links);
// every pair of groups is joined by exactly one global link. Host slots
// (workers 0..N-1, then servers 0..S-1) fill routers in order, group 0
// router 0 first, p per router; all routers are built even when ports stay
// empty. Host diameter (g >= 2): 5 hops, host-local-global-local-host.
//
// Global links ("palmtree" arrangement): group i numbers its global ports
// t = 0 .. a*h-1, port t belonging to router t / h, and port t leads to group
// (i + t + 1) mod g. So for groups i < j the link joins router
// (j - i - 1) / h of group i to router (g - 1 - (j - i)) / h of group j.
// Group i uses ports 0 .. g-2, hence g <= a*h + 1.
//
// Parameters:
//   "groups"                  g in [1, a*h+1]; default: the smallest g with
//                             g*a*p >= workers + parameter_servers.
//   "routers_per_group"       a in [1, 64], default 4.
//   "hosts_per_router"        p in [1, 64], default 2.
//   "global_links_per_router" h in [1, 64], default 2.
//   "global_bandwidth"        bandwidth string; default the platform link's.
//   "global_latency"          time string; default the platform link's.
// Host and local links use the platform link.
//
// Reference: J. Kim, W. J. Dally, S. Scott, D. Abts, "Technology-driven,
// highly-scalable dragonfly topology", ISCA 2008; palmtree arrangement from
// Camarero, Vallejo, Beivide, "Topological characterization of Hamming and
// dragonfly networks", ACM TACO 2014.
#include "platforms/topology.hpp"

#include <optional>

namespace ddlsim::platforms {
namespace {

struct DragonflyParams {
  int groups = 0;  // 0: smallest that fits
  int routers_per_group = 4;
  int hosts_per_router = 2;
  int global_links_per_router = 2;
  std::optional<double> global_bandwidth_Bps;
  std::optional<double> global_latency_s;
};

class DragonflyBuilder final : public TopologyBuilder {
 public:
  explicit DragonflyBuilder(DragonflyParams params) : p_(params) {}

  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    const int a = p_.routers_per_group, p = p_.hosts_per_router, h = p_.global_links_per_router;
    const int needed = host_count(request);
    const int g = p_.groups > 0 ? p_.groups : std::max(1, (needed + a * p - 1) / (a * p));
    if (g > a * h + 1)
      throw ConfigError(request.workers_path,
                        fmt::format("a dragonfly with {} routers per group, {} hosts per router and {} global links "
                                    "per router holds at most {} groups ({} hosts), but the platform has {}",
                                    a, p, h, a * h + 1, (a * h + 1) * a * p, describe_hosts(request)));
    if (needed > g * a * p)
      throw ConfigError(request.workers_path,
                        fmt::format("a dragonfly of {} groups of {} routers with {} hosts each holds at most {} hosts, "
                                    "but the platform has {}",
                                    g, a, p, g * a * p, describe_hosts(request)));

    // Host links, all-to-all router links in each group, one global link per pair of groups.
    check_link_count(needed + std::int64_t{g} * a * (a - 1) / 2 + std::int64_t{g} * (g - 1) / 2, request.params_path,
                     fmt::format("a dragonfly of {} groups of {} routers", g, a));
    Topology topo;
    topo.kind = "dragonfly";
    auto hosts = add_hosts(topo, request);
    std::vector<Vertex> routers;  // group * a + r
    std::size_t slot = 0;
    for (int group = 0; group < g; ++group) {
      for (int r = 0; r < a; ++r) {
        routers.push_back(add_node(topo, fmt::format("router-{}-{}", group, r), NodeKind::SWITCH));
        for (int port = 0; port < p && slot < hosts.size(); ++port)
          add_link(topo, hosts[slot++], routers.back(), request.link);
      }
      for (int r = 0; r < a; ++r)
        for (int s = r + 1; s < a; ++s) add_link(topo, routers[group * a + r], routers[group * a + s], request.link);
    }
    const LinkSpec global{p_.global_bandwidth_Bps.value_or(request.link.bandwidth_Bps),
                          p_.global_latency_s.value_or(request.link.latency_s)};
    for (int i = 0; i < g; ++i)
      for (int j = i + 1; j < g; ++j)
        add_link(topo, routers[i * a + (j - i - 1) / h], routers[j * a + (g - 1 - (j - i)) / h], global);
    return topo;
  }

 private:
  DragonflyParams p_;
};

DragonflyParams read_dragonfly(ObjectReader& params) {
  DragonflyParams p;
  p.groups = static_cast<int>(params.integer("groups", 0, 1, 4097));
  p.routers_per_group = static_cast<int>(params.integer("routers_per_group", 4, 1, 64));
  p.hosts_per_router = static_cast<int>(params.integer("hosts_per_router", 2, 1, 64));
  p.global_links_per_router = static_cast<int>(params.integer("global_links_per_router", 2, 1, 64));
  const int max_groups = p.routers_per_group * p.global_links_per_router + 1;
  if (p.groups > max_groups)
    throw ConfigError(params.path_of("groups"),
                      fmt::format("at most routers_per_group * global_links_per_router + 1 = {} groups can be "
                                  "joined pairwise, got {}",
                                  max_groups, p.groups));
  if (params.has("global_bandwidth")) p.global_bandwidth_Bps = params.bandwidth_Bps("global_bandwidth", 0);
  if (params.has("global_latency")) p.global_latency_s = params.latency_s("global_latency", 0);
  return p;
}

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "dragonfly",
                "dragonfly (Kim 2008): fully connected router groups, one global link per group pair",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::platforms::DragonflyBuilder>(
                      ddlsim::platforms::read_dragonfly(params));
                })
