// ddlsim: what the collectives know of the platform, and what "auto" chose.
//
// make_collective_group() is the one place a platform becomes a CollectiveGroup
// (engine/simulation.cpp and engine/collective_compare.cpp): the ranks, their
// physical neighbourhood (multitree), the workers per node of a hierarchical
// platform (hierarchical), and, on every platform but a uniform one-switch star,
// the contention-aware schedule cost "auto" chooses by (models/network_cost.hpp).
#pragma once

#include "models/bucketing.hpp"
#include "models/collective.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::sim {

/// The group of `topo`'s workers and servers. Routes for the contention estimate are the
/// emitted platform's (platforms::routed_paths for `routing` and `seed`); it prices the
/// schedules the simulation runs: rank_phases when `pipelined`, else rank_schedule.
models::CollectiveGroup make_collective_group(const platforms::Topology& topo, bool pipelined,
                                              platforms::Routing routing, std::uint64_t seed,
                                              std::shared_ptr<const models::SoftwareCost> software = nullptr);

/// The intra-node (alpha, beta) of a platform of multi-GPU nodes (Topology::gpus_per_node > 0):
/// a path inside a node is two worker links, so alpha = twice the worst worker-link latency and
/// beta = 1 / the slowest worker link. nullopt for every other platform.
std::optional<models::LinkClass> intra_node_link_class(const platforms::Topology& topo);

/// What a meta-collective ("auto") runs for one bucket size.
struct CollectiveChoiceRecord {
  double bucket_bytes = 0;
  std::string algorithm;
  double estimated_s = 0;
  std::string basis;
};

/// The protocol a per-call software preset (`nccl`) runs a bucket's all-reduce with, on the
/// network at time 0 (models/protocol_choice.hpp).
struct ProtocolChoiceRecord {
  double bucket_bytes = 0;
  std::string protocol;
  double call_cost_s = 0;
};

/// One record per distinct bucket size (ascending) for a collective that chooses per call;
/// empty for an ordinary algorithm.
std::vector<CollectiveChoiceRecord> collective_choices(const models::Collective& collective,
                                                       const models::CollectiveGroup& group,
                                                       const models::AlphaBeta& ab,
                                                       const std::vector<models::Bucket>& buckets);

}  // namespace ddlsim::sim
