// Full: a complete graph, every pair of hosts linked directly.
//
// H hosts (workers 0..N-1, then servers 0..S-1), H(H-1)/2 platform links, no
// switches; every host is one hop from every other. An idealised
// all-to-all fabric (e.g. a single NVSwitch domain seen as point-to-point
// links). No parameters.
//
// Reference: the fully connected network of the alpha-beta model in Thakur,
// Rabenseifner & Gropp, "Optimization of collective communication operations
// in MPICH", IJHPCA 2005.
#include "platforms/topology.hpp"

namespace ddlsim::platforms {
namespace {

class FullBuilder final : public TopologyBuilder {
 public:
  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    Topology topo;
    topo.kind = "full";
    auto hosts = add_hosts(topo, request);
    for (std::size_t i = 0; i < hosts.size(); ++i)
      for (std::size_t j = i + 1; j < hosts.size(); ++j) add_link(topo, hosts[i], hosts[j], request.link);
    return topo;
  }
};

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "full", "complete graph: every pair of hosts linked directly",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::platforms::FullBuilder>(); })
