// Fat tree: the k-ary three-level fat tree of Al-Fares, Loukissas & Vahdat.
//
// k pods, each with k/2 edge switches "edge-<pod>-<i>" and k/2 aggregation
// switches "agg-<pod>-<j>"; (k/2)^2 core switches "core-<c>". Inside a pod
// every edge switch links to every aggregation switch; aggregation switch j of
// every pod links to core switches j*k/2 .. j*k/2 + k/2 - 1. Each edge switch
// has k/2 host ports, so the tree holds k^3/4 hosts; host slots (workers
// 0..N-1, then servers 0..S-1) fill ports in order, pod 0 edge 0 first.
// Unused ports stay empty; every switch is always built. With every port
// filled there are k^3/4 host links plus k^3/4 edge-aggregation and k^3/4
// aggregation-core links (k = 4: 16 hosts, 20 switches, 48 links).
//
// Parameters:
//   "k"                even integer in [2, 256]; default: the smallest even k
//                      with k^3/4 >= workers + parameter_servers.
//   "oversubscription" number in [1, 1e6], default 1. Every switch-to-switch link
//                      (edge-aggregation and aggregation-core) gets the
//                      platform bandwidth divided by this factor (same
//                      latency); host links keep the platform link. 1 is the
//                      full-bisection tree of the paper.
//
// Reference: M. Al-Fares, A. Loukissas, A. Vahdat, "A scalable, commodity data
// center network architecture", SIGCOMM 2008.
#include "platforms/topology.hpp"

#include <limits>

namespace ddlsim::platforms {
namespace {

class FatTreeBuilder final : public TopologyBuilder {
 public:
  FatTreeBuilder(int k, double oversubscription) : k_(k), oversubscription_(oversubscription) {}

  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    const int hosts_needed = host_count(request);
    int k = k_;
    if (k == 0)
      for (k = 2; k * k * k / 4 < hosts_needed;) k += 2;
    const int half = k / 2;
    // Host links (one per host), then k pods of (k/2)^2 edge-aggregation and (k/2)^2 aggregation-core links.
    check_link_count(hosts_needed + std::int64_t{k} * half * half * 2, request.params_path + "/k",
                     fmt::format("a k={} fat tree", k));
    if (hosts_needed > k * k * k / 4)
      throw ConfigError(request.workers_path,
                        fmt::format("a k={} fat tree holds at most {} hosts, but the platform has {}", k, k * k * k / 4,
                                    describe_hosts(request)));

    Topology topo;
    topo.kind = "fat_tree";
    auto hosts = add_hosts(topo, request);
    const LinkSpec uplink{request.link.bandwidth_Bps / oversubscription_, request.link.latency_s};
    std::vector<Vertex> core;
    for (int c = 0; c < half * half; ++c) core.push_back(add_node(topo, fmt::format("core-{}", c), NodeKind::SWITCH));
    std::size_t slot = 0;
    for (int pod = 0; pod < k; ++pod) {
      std::vector<Vertex> edge, agg;
      for (int i = 0; i < half; ++i)
        edge.push_back(add_node(topo, fmt::format("edge-{}-{}", pod, i), NodeKind::SWITCH));
      for (int j = 0; j < half; ++j) agg.push_back(add_node(topo, fmt::format("agg-{}-{}", pod, j), NodeKind::SWITCH));
      for (Vertex e : edge) {
        for (int port = 0; port < half && slot < hosts.size(); ++port) add_link(topo, hosts[slot++], e, request.link);
        for (Vertex a : agg) add_link(topo, e, a, uplink);
      }
      for (int j = 0; j < half; ++j)
        for (int c = 0; c < half; ++c) add_link(topo, agg[j], core[j * half + c], uplink);
    }
    return topo;
  }

 private:
  int k_;  // 0: smallest that fits
  double oversubscription_;
};

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "fat_tree",
                "k-ary three-level fat tree (Al-Fares 2008); params k, oversubscription",
                [](ddlsim::ObjectReader& params) {
                  auto k = static_cast<int>(params.integer("k", 0, 2, 256));
                  if (k % 2 != 0)
                    throw ddlsim::ConfigError(params.path_of("k"), fmt::format("k must be even, got {}", k));
                  double oversubscription =
                      params.number("oversubscription", 1, 1, 1e6);
                  return std::make_unique<ddlsim::platforms::FatTreeBuilder>(k, oversubscription);
                })
