// ddlsim: settings that are valid one by one but not together -- refused,
// because the engine would otherwise ignore one of them silently.
#include "scenario/packet_checks.hpp"
#include "scenario/scenario.hpp"

#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>

namespace ddlsim::sim {

std::string call_cost_range_message(double call_s) {
  return fmt::format("a collective call's fixed cost must be in [0, {} s] (real ones are microseconds to milliseconds), "
                     "got {} s",
                     MAX_CALL_COST_S, call_s);
}

void check_gpus_per_node(const platforms::Topology& topology, int workers, bool given, const std::string& path) {
  if (const int g = topology.gpus_per_node; g > 0 && workers % g != 0)
    throw ConfigError(path, fmt::format("{} GPUs per node{} do not divide the {} workers (nodes fill in rank order: the "
                                        "last would hold {}); give a gpus_per_node that divides them",
                                        g, given ? "" : " (the default)", workers, workers % g));
}

void check_packet_network(const NetworkSpec& net, platforms::Routing routing, const PacketCheckPaths& paths) {
  if (net.model != NetworkModel::IDEAL)
    throw ConfigError(paths.model,
                      "\"tcp\" and \"calibrated\" are flow fidelity's models; at packet fidelity ns-3 sends every "
                      "segment and TCP is set in network.packet (\"tcp\", \"segment_bytes\", ...): remove \"model\"");
  if (routing != platforms::Routing::SHORTEST)
    throw ConfigError(paths.routing,
                      fmt::format("\"{}\": ns-3 routes every packet on its own shortest paths (global routing); use "
                                  "\"shortest\", or \"fidelity\": \"flow\" for multipath routing",
                                  platforms::to_string(routing)));
  if (const auto& sw = net.software) {
    auto check = [&paths](const models::SoftwareCost& cost) {
      if (cost.protocol_efficiency != 1)
        throw ConfigError(paths.software + "/protocol_efficiency",
                          fmt::format("{} (preset \"{}\"): at packet fidelity ns-3 puts every header on the wire; set "
                                      "\"protocol_efficiency\": 1",
                                      cost.protocol_efficiency, cost.preset));
    };
    check(*sw);
    for (const auto& protocol : sw->protocols) check(*protocol);
  }
}

namespace {

/// Packet fidelity runs ns-3 through SimGrid's binding (engine/ns3_binding.hpp): what it cannot
/// carry is refused here, each with what to do instead.
void check_packet(const Scenario& s) {
  if (s.network.fidelity != Fidelity::PACKET) return;
  check_packet_network(s.network, s.platform.routing, {"/network/model", "/network/software", "/platform/routing"});
  if (!s.network.link_traces.empty())
    throw ConfigError("/network/link_traces",
                      "SimGrid's ns-3 binding cannot change a link's bandwidth or latency during a run; use "
                      "\"fidelity\": \"flow\" for link traces");
  // SimGrid's binding counts a message's bytes in 32 bits (SgFlow::total_bytes_).
  if (const double model_bytes = s.workload.worker.profile.grad_bytes(); model_bytes > 4294967295.0)
    throw ConfigError("/network/fidelity",
                      fmt::format("the model's {:.0f} gradient bytes exceed what SimGrid's ns-3 binding carries in one "
                                  "message (4 GiB); use \"fidelity\": \"flow\"",
                                  model_bytes));
  if (const auto links = boost::num_edges(s.platform.graph.graph); links > 255 * 255)
    throw ConfigError("/platform", fmt::format("{} links: SimGrid's ns-3 binding numbers at most 65,025 (255 x 255 "
                                               "subnets); use \"fidelity\": \"flow\"",
                                               links));
}

}  // namespace

void check_combination(const Scenario& s, bool collective_given) {
  check_packet(s);
  const auto& coll = *s.training.collective_algorithm;
  if (s.training.sync_model->traits().uses_servers && collective_given)
    throw ConfigError("/training/collective",
                      fmt::format("sync model \"{}\" aggregates through parameter servers and runs no collective; "
                                  "remove \"collective\" (or use \"bsp\" with \"aggregation\": \"allreduce\")",
                                  s.training.sync.name));
  if (!s.training.sync_model->traits().uses_servers && !s.training.sync_model->traits().uses_collective && collective_given)
    throw ConfigError("/training/collective",
                      fmt::format("sync model \"{}\" exchanges models point to point with its neighbours in its "
                                  "logical graph and runs no collective; remove \"collective\" (choose the graph "
                                  "with \"params\": {{\"graph\": ...}})",
                                  s.training.sync.name));
  if (s.platform.parameter_servers > 0 && !s.training.sync_model->traits().uses_servers && !coll.uses_servers())
    throw ConfigError("/platform/parameter_servers",
                      fmt::format("{} parameter server{} would sit idle: sync model \"{}\" with collective \"{}\" "
                                  "uses none; set it to 0, or use a parameter-server sync model or collective",
                                  s.platform.parameter_servers, s.platform.parameter_servers > 1 ? "s" : "",
                                  s.training.sync.name, s.training.collective.name));
  if (s.training.sync_model->traits().uses_subgroup_collectives && coll.uses_servers())
    throw ConfigError("/training/collective/name",
                      fmt::format("sync model \"{}\" runs all-reduces among the workers alone; collective \"{}\" "
                                  "needs parameter servers: choose a collective without them",
                                  s.training.sync.name, s.training.collective.name));
  if (s.training.bucketing.policy == BucketingPolicy::MGWFBP && !s.training.sync_model->traits().uses_collective)
    throw ConfigError("/training/bucketing/policy",
                      fmt::format("\"mgwfbp\" merges gradients by all-reduce startup costs; sync model \"{}\" "
                                  "{}: use \"policy\": \"size\"",
                                  s.training.sync.name,
                                  s.training.sync_model->traits().uses_servers ? "aggregates through parameter servers"
                                                                        : "runs no all-reduce"));
  if (s.training.bucketing.copy_bandwidth_Bps > 0 && !s.training.sync_model->traits().uses_servers &&
      !s.training.sync_model->traits().uses_collective)
    throw ConfigError("/training/bucketing/copy_bandwidth",
                      fmt::format("sync model \"{}\" exchanges no gradient buckets (it sends models or tensors point "
                                  "to point), so no bucket is copied; remove \"copy_bandwidth\"",
                                  s.training.sync.name));
  check_bucketing(s);
  check_sharding_combination(s, collective_given);
  if (s.network.fidelity == Fidelity::ANALYTIC && s.network.model == NetworkModel::TCP &&
      s.training.sync_model->traits().uses_collective)
    throw ConfigError("/network/model",
                      "\"tcp\" (SimGrid LV08: TCP window, cross traffic and RTT-weighted sharing) is a flow-level "
                      "model that closed forms cannot honour; at analytic fidelity use \"ideal\" or \"calibrated\" "
                      "(latency_factor 13.01 and bandwidth_factor 0.97 are LV08's factors without window and cross "
                      "traffic), or \"fidelity\": \"flow\"");
}

}  // namespace ddlsim::sim
