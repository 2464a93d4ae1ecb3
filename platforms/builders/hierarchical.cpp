// Hierarchical: multi-GPU nodes (NVLink-class links inside, NICs between).
//
// Workers fill nodes of G accelerators in rank order (rank r on node r / G;
// the last node may be partial). Node i has a switch "node-<i>" to which its
// workers attach with the intra-node link; every node switch attaches to one
// core switch "core-0" with the platform link (the node's NIC). Each
// parameter server is a node of its own, attached directly to "core-0" with
// the platform link. Host diameter: 2 inside a node, 4 across nodes. G is
// exposed as Topology::gpus_per_node, from which the hierarchical all-reduce
// takes its node size.
//
// Parameters:
//   "gpus_per_node"  G, integer in [1, 1024], default 8.
//   "intra_link"     {"bandwidth", "latency"}, default "300GBps" (2400 Gbps,
//                    one direction of A100 NVLink 3: 12 links x 25 GB/s) and
//                    "1us".
//
// Reference: NVIDIA DGX A100 system architecture (8 GPUs per node on
// NVSwitch, one NIC per GPU pair); the two-level model of hierarchical
// all-reduce in Sergeev & Del Balso, "Horovod", arXiv:1802.05799, 2018.
#include "platforms/topology.hpp"

namespace ddlsim::platforms {
namespace {

class HierarchicalBuilder final : public TopologyBuilder {
 public:
  HierarchicalBuilder(int gpus_per_node, LinkSpec intra) : gpus_per_node_(gpus_per_node), intra_(intra) {}

  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    Topology topo;
    topo.kind = "hierarchical";
    topo.gpus_per_node = gpus_per_node_;
    add_hosts(topo, request);
    Vertex core = add_node(topo, "core-0", NodeKind::SWITCH);
    Vertex node = core;
    for (int r = 0; r < request.workers; ++r) {
      if (r % gpus_per_node_ == 0) {
        node = add_node(topo, fmt::format("node-{}", r / gpus_per_node_), NodeKind::SWITCH);
        add_link(topo, node, core, request.link);
      }
      add_link(topo, topo.workers[r], node, intra_);
    }
    for (Vertex server : topo.servers) add_link(topo, server, core, request.link);
    return topo;
  }

 private:
  int gpus_per_node_;
  LinkSpec intra_;
};

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "hierarchical",
                "nodes of G GPUs on a node switch (intra_link), node switches on one core switch",
                [](ddlsim::ObjectReader& params) {
                  auto gpus = static_cast<int>(params.integer("gpus_per_node", 8, 1, 1024));
                  ddlsim::ObjectReader intra = params.object("intra_link");
                  ddlsim::platforms::LinkSpec link;
                  link.bandwidth_Bps = intra.bandwidth_Bps("bandwidth", 300e9);
                  link.latency_s = intra.latency_s("latency", 1e-6);
                  intra.finish();
                  return std::make_unique<ddlsim::platforms::HierarchicalBuilder>(gpus, link);
                })
