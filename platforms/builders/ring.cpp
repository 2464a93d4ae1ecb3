// Ring: hosts linked directly to their two neighbours, no switches.
//
// Host slot i (workers 0..N-1, then servers 0..S-1) is linked to slot
// (i+1) mod H with one platform link. H = 1 has no link, H = 2 a single link
// (never a parallel pair), H >= 3 has H links. Host diameter floor(H/2).
// No parameters.
//
// Reference: the ring all-reduce network of Patarasuk & Yuan, "Bandwidth
// optimal all-reduce algorithms for clusters of workstations", JPDC 2009.
#include "platforms/topology.hpp"

namespace ddlsim::platforms {
namespace {

class RingBuilder final : public TopologyBuilder {
 public:
  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    Topology topo;
    topo.kind = "ring";
    auto hosts = add_hosts(topo, request);
    const std::size_t n = hosts.size();
    if (n < 2) return topo;
    for (std::size_t i = 0; i < (n == 2 ? 1 : n); ++i) add_link(topo, hosts[i], hosts[(i + 1) % n], request.link);
    return topo;
  }
};

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "ring",
                "hosts linked directly in a ring (host i <-> host i+1 mod H)",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::platforms::RingBuilder>(); })
