// Full: a complete graph, every pair of hosts linked directly.
//
// H hosts (workers 0..N-1, then servers 0..S-1), H(H-1)/2 platform links (at
// most MAX_PLATFORM_LINKS: 2,896 hosts), no
// switches; every host is one hop from every other. An idealised
// all-to-all fabric (e.g. a single NVSwitch domain seen as point-to-point
// links). No parameters.
//
// Reference: the fully connected network of the alpha-beta model in Thakur,
// Rabenseifner & Gropp, "Optimization of collective communication operations
// in MPICH", IJHPCA 2005.
#include "platforms/topology.hpp"

#include <fmt/format.h>

namespace ddlsim::platforms {
namespace {

class FullBuilder final : public TopologyBuilder {
 public:
  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    const std::int64_t h = host_count(request);
    check_link_count(h * (h - 1) / 2, request.workers_path, fmt::format("a full mesh of {}", describe_hosts(request)));
    Topology topo;
    topo.kind = "full";
    auto hosts = add_hosts(topo, request);
    // add_link's parallel-link check scans a host's links: over H(H-1)/2 links that is cubic
    // (minutes at 3,000 hosts). Each pair is linked once here by construction.
    for (std::size_t i = 0; i < hosts.size(); ++i)
      for (std::size_t j = i + 1; j < hosts.size(); ++j)
        boost::add_edge(hosts[i], hosts[j],
                        EdgeProps{topo.graph[hosts[i]].name + "<->" + topo.graph[hosts[j]].name,
                                  request.link.bandwidth_Bps, request.link.latency_s},
                        topo.graph);
    return topo;
  }
};

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "full", "complete graph: every pair of hosts linked directly",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::platforms::FullBuilder>(); })
