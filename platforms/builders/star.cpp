// Star: every host on one central switch.
//
// Hosts (workers 0..N-1, then servers 0..S-1) each attach to the switch
// "switch-0" with one platform link, so any two hosts are two hops apart and
// the switch is never the bottleneck (it has no capacity of its own). This is
// the classic single-switch cluster model. No parameters.
//
// Reference: SimGrid's "cluster" zone with a star topology (SimGrid
// documentation, "Describing your platform").
#include "platforms/topology.hpp"

namespace ddlsim::platforms {
namespace {

class StarBuilder final : public TopologyBuilder {
 public:
  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    Topology topo;
    topo.kind = "star";
    auto hosts = add_hosts(topo, request);
    Vertex hub = add_node(topo, "switch-0", NodeKind::SWITCH);
    for (Vertex h : hosts) add_link(topo, h, hub, request.link);
    return topo;
  }
};

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "star", "every host on one switch \"switch-0\", one link each",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::platforms::StarBuilder>(); })
