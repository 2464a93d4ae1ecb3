// ddlsim: settings that are valid one by one but not together -- refused,
// because the engine would otherwise ignore one of them silently.
#include "scenario/scenario.hpp"

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

void check_combination(const Scenario& s, bool collective_given) {
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
  if (s.network.fidelity == Fidelity::ANALYTIC && s.network.model == NetworkModel::TCP &&
      s.training.sync_model->traits().uses_collective)
    throw ConfigError("/network/model",
                      "\"tcp\" (SimGrid LV08: TCP window, cross traffic and RTT-weighted sharing) is a flow-level "
                      "model that closed forms cannot honour; at analytic fidelity use \"ideal\" or \"calibrated\" "
                      "(latency_factor 13.01 and bandwidth_factor 0.97 are LV08's factors without window and cross "
                      "traffic), or \"fidelity\": \"flow\"");
}

}  // namespace ddlsim::sim
