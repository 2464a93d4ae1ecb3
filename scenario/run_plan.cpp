// ddlsim: which engine runs a scenario, and which workers it simulates (scenario/run_plan.hpp).
#include "scenario/run_plan.hpp"

#include "models/protocol_choice.hpp"
#include "models/collective.hpp"
#include "models/dependent_rounds.hpp"
#include "models/sync_model.hpp"
#include "scenario/compression_plan.hpp"

#include "models/units.hpp"

#include <set>
#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace ddlsim::sim {
namespace {

/// One call of the scenario's all-reduce of `bytes` on the plan's group and alpha-beta: the
/// library's launch (none among a single rank) and the closed form.
std::function<double(double)> allreduce_cost(const Scenario& scenario, const RunPlan& plan) {
  return [&scenario, &plan](double bytes) {
    const auto& algo = models::resolve(*scenario.training.collective_algorithm, plan.group, bytes, plan.ab);
    const auto call = models::call_protocol(algo, plan.group, bytes, plan.ab, scenario.network.collective_call_s,
                                            scenario.network.collective_call_given);
    const double call_s =
        plan.group.workers > 1 || algo.uses_servers() ? call.call_cost_s * models::collective_calls(algo, bytes) : 0.0;
    return call_s + algo.analytic_time_s(plan.group, bytes, models::with_software(plan.ab, call.software));
  };
}

/// The buckets under the scenario's bucketing policy (size cap, PyTorch DDP, MG-WFBP, Horovod's
/// tensor fusion with each bucket's wait for its cycle).
void plan_buckets(const Scenario& scenario, RunPlan& plan) {
  const auto& spec = scenario.training.bucketing;
  const auto& profile = scenario.workload.worker.profile;
  auto& buckets = plan.training.buckets;
  switch (spec.policy) {
    case BucketingPolicy::SIZE: buckets = models::make_buckets(profile, spec.bucket_bytes); break;
    case BucketingPolicy::DDP:
      buckets = models::make_buckets_ddp(profile, spec.first_bucket_bytes, spec.bucket_bytes);
      break;
    case BucketingPolicy::MGWFBP:
      // MG-WFBP's cost model: one call of the scenario's all-reduce on this platform's alpha and beta.
      buckets = models::make_buckets_mgwfbp(profile, allreduce_cost(scenario, plan));
      break;
    case BucketingPolicy::HOROVOD: {
      // The coordinator's next cycle waits for this one's collectives (models/horovod_fusion.cpp).
      auto fused = models::make_buckets_horovod(profile, spec.fusion_threshold_bytes, spec.cycle_s, spec.overlap,
                                                allreduce_cost(scenario, plan));
      buckets = std::move(fused.buckets);
      plan.launch_wait_s = std::move(fused.wait_s);
      const auto& st = scenario.training.stragglers;
      if (!st.speed_factors.empty() || st.distribution != NoiseDistribution::NONE)
        plan.notes.emplace_back(
            "bucketing \"horovod\": the fused buckets and each one's wait for its cycle come from the profile's "
            "nominal backward times; stragglers and noise move when gradients are ready, not the plan");
      break;
    }
  }
}

/// The buckets' compression under the scenario's compressor and each adaptive candidate, and
/// AR-Topk's selecting worker per iteration.
void plan_compression(const Scenario& scenario, RunPlan& plan) {
  auto& training = plan.training;
  training.compression = compress_buckets(scenario, training.buckets);
  if (const auto& adaptive = scenario.training.adaptive; adaptive.enabled)
    for (const auto& comp : adaptive.candidates) {
      training.compression_variants.push_back(compress_buckets(scenario, *comp, training.buckets));
      plan.variant_cr.push_back(kept_fraction(*comp, training.buckets));
    }
  if (!training.compression.empty()) training.roots = selecting_workers(scenario);
  plan.static_cr =
      training.compression.empty() ? 1.0 : kept_fraction(*scenario.training.compressor_model, training.buckets);
}

/// A note when asynchronous training on parameter servers runs workers of identical compute at flow
/// fidelity: the fluid model keeps them in lockstep at the servers (all push, then all pull), where
/// real workers drift apart and overlap one's push with another's pull (docs/validation.md, "Results:
/// time to accuracy": 20.97 ms simulated against 15.3 ms measured at 4 workers on one server).
void note_lockstep_servers(const Scenario& scenario, RunPlan& plan) {
  const auto traits = scenario.training.sync_model->traits();
  const auto& st = scenario.training.stragglers;
  if (!traits.uses_servers || traits.synchronous || scenario.platform.workers < 2 ||
      scenario.network.fidelity != Fidelity::FLOW || !st.speed_factors.empty() || st.distribution != NoiseDistribution::NONE)
    return;
  plan.notes.push_back(fmt::format(
      "sync model \"{}\": {} workers of identical compute stay in lockstep at the parameter servers in the flow model "
      "(all push, then all pull); real workers drift apart and overlap one's push with another's pull (the simulated "
      "iteration was 37 % too slow at 4 workers on one server in the lab: docs/validation.md, \"Results: time to "
      "accuracy\"); give "
      "training.stragglers a noise (e.g. normal, sigma 0.1) to model the drift",
      scenario.training.sync.name, scenario.platform.workers));
}

/// A note when the scenario runs outside what its network.calibration was fitted on (message sizes,
/// link rates, path latency, ranks): there the fitted factors and costs extrapolate.
void note_calibration_range(const Scenario& scenario, RunPlan& plan) {
  const auto& range = scenario.network.calibration_range;
  if (!range) return;
  auto outside = [](double lo, double hi, double a, double b) {
    const double slack = 1e-9 * std::max(std::abs(lo), std::abs(hi));
    return a < lo - slack || b > hi + slack;
  };
  std::vector<std::string> out;
  const auto& training = plan.training;
  if (scenario.training.sync_model->traits().uses_collective && !training.buckets.empty()) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (std::size_t b = 0; b < training.buckets.size(); ++b) {
      const double bytes = b < training.compression.size() ? training.compression[b].comm_bytes : training.buckets[b].bytes;
      lo = std::min(lo, bytes), hi = std::max(hi, bytes);
    }
    if (outside(range->min_bytes, range->max_bytes, lo, hi))
      out.push_back(fmt::format("collectives of {} to {} (fitted: {} to {})", units::format_bytes(lo),
                                units::format_bytes(hi), units::format_bytes(range->min_bytes),
                                units::format_bytes(range->max_bytes)));
  }
  const auto& g = scenario.platform.graph.graph;
  double slow = std::numeric_limits<double>::infinity(), fast = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g)))
    slow = std::min(slow, g[e].bandwidth_Bps), fast = std::max(fast, g[e].bandwidth_Bps);
  if (fast > 0 && outside(range->min_bandwidth_Bps, range->max_bandwidth_Bps, slow, fast))
    out.push_back(fmt::format("links of {} to {} (fitted: {} to {})", units::format_bandwidth(slow),
                              units::format_bandwidth(fast), units::format_bandwidth(range->min_bandwidth_Bps),
                              units::format_bandwidth(range->max_bandwidth_Bps)));
  const double alpha = analytic_alpha_beta(scenario.platform.graph).alpha_s;
  if (outside(range->min_latency_s, range->max_latency_s, alpha, alpha))
    out.push_back(fmt::format("a host-to-host latency of {} (fitted: {} to {})", units::format_time(alpha),
                              units::format_time(range->min_latency_s), units::format_time(range->max_latency_s)));
  const int ranks = scenario.platform.workers;
  if (outside(range->min_ranks, range->max_ranks, ranks, ranks))
    out.push_back(fmt::format("{} workers (fitted: {} to {} ranks)", ranks, range->min_ranks, range->max_ranks));
  if (!out.empty())
    plan.notes.push_back(fmt::format("network.calibration \"{}\" extrapolates: this scenario runs {}; its factors and "
                                     "costs were fitted on measurements inside those ranges only (docs/validation.md, "
                                     "\"Calibration\")",
                                     scenario.network.calibration_file, fmt::join(out, ", ")));
}

/// The gradient collective resolved for every bucket as sent (RunPlan::resolved).
void resolve_collective(const Scenario& scenario, RunPlan& plan) {
  plan.collective = scenario.training.collective_algorithm;
  plan.collective_name = scenario.training.collective.name;
  if (!scenario.training.sync_model->traits().uses_collective || scenario.training.adaptive.enabled) return;
  const auto& training = plan.training;
  for (std::size_t b = 0; b < training.buckets.size(); ++b) {
    const double bytes = b < training.compression.size() ? training.compression[b].comm_bytes : training.buckets[b].bytes;
    if (plan.resolved.count(bytes) != 0) continue;
    auto name = models::resolved_name(*plan.collective, plan.group, bytes, plan.ab);
    plan.resolved.emplace(bytes, RunPlan::Resolved{&models::resolve(*plan.collective, plan.group, bytes, plan.ab),
                                                   name.empty() ? plan.collective_name : std::move(name)});
  }
}

}  // namespace

RunPlan plan_run(const Scenario& scenario) {
  RunPlan plan;
  plan.fiber_lane_exclusion = detail::fiber_lane_exclusion(scenario);
  plan.replication_exclusion = detail::replication_exclusion(scenario);
  plan.classes = detail::worker_partition(scenario);
  plan.streams_per_worker = scenario.training.bucketing.max_inflight;
  plan.server_loops = scenario.training.sync_model->traits().uses_servers;
  plan.collective_servers =
      scenario.training.collective_algorithm->uses_servers() && scenario.network.fidelity != Fidelity::ANALYTIC;
  plan.group = make_collective_group(scenario.platform.graph, scenario.network.granularity == Granularity::PIPELINED,
                                     scenario.platform.routing, scenario.seed, scenario.network.software);
  auto network = std::make_shared<AnalyticNetwork>(scenario.platform.graph, scenario.network);
  plan.ab = network->at(0);
  plan.network = std::move(network);
  auto& training = plan.training;
  training.iterations = scenario.workload.iterations;
  training.overlap = scenario.training.bucketing.overlap;
  training.framework_overhead_s = scenario.workload.framework_overhead_s;
  training.copy_bandwidth_Bps = scenario.training.bucketing.copy_bandwidth_Bps;
  plan_buckets(scenario, plan);
  plan_sharding(scenario, training);  // scenario/scenario_sharding.cpp
  plan_compression(scenario, plan);
  // What "auto" runs, per bucket size (as sent); under adaptive compression iterations.csv says, per iteration.
  if (scenario.training.sync_model->traits().uses_collective && !scenario.training.adaptive.enabled &&
      !scenario.training.sharding.enabled()) {
    auto sent = training.buckets;
    for (std::size_t b = 0; b < training.compression.size(); ++b) sent[b].bytes = training.compression[b].comm_bytes;
    plan.collective_choices = collective_choices(*scenario.training.collective_algorithm, plan.group, plan.ab, sent);
    if (scenario.network.software && !scenario.network.software->protocols.empty()) {
      std::set<double> sizes;
      for (const auto& b : sent) sizes.insert(b.bytes);
      for (double bytes : sizes) {
        const auto& algo = models::resolve(*scenario.training.collective_algorithm, plan.group, bytes, plan.ab);
        const auto call = models::call_protocol(algo, plan.group, bytes, plan.ab, scenario.network.collective_call_s,
                                                scenario.network.collective_call_given);
        plan.protocol_choices.push_back({bytes, call.software->preset, call.call_cost_s});
      }
    }
  }
  resolve_collective(scenario, plan);
  note_calibration_range(scenario, plan);
  note_lockstep_servers(scenario, plan);
  return plan;
}

const models::Collective& RunPlan::gradient_collective(double bytes) const {
  if (auto found = resolved.find(bytes); found != resolved.end()) return *found->second.algorithm;
  return models::resolve(*collective, group, bytes, ab);
}

std::string RunPlan::gradient_collective_name(double bytes) const {
  if (auto found = resolved.find(bytes); found != resolved.end()) return found->second.name;
  auto name = models::resolved_name(*collective, group, bytes, ab);
  return name.empty() ? collective_name : name;
}

}  // namespace ddlsim::sim

namespace ddlsim::sim::detail {

std::string fiber_lane_exclusion(const Scenario& scenario) {
  const auto& training = scenario.training;
  const auto& sync = *training.sync_model;
  if (scenario.network.fidelity != Fidelity::ANALYTIC) return "not analytic fidelity";
  if (sync.traits().uses_servers || scenario.platform.parameter_servers > 0) return "parameter servers";
  if (training.graph) return "a logical graph (point-to-point flows)";
  if (sync.traits().uses_subgroup_collectives) return "subgroup all-reduces (flows)";
  if (training.sharding.strategy == models::ShardingStrategy::FSDP_HYBRID_SHARD)
    return "hybrid sharding's collectives among shard and replica groups (flows)";
  if (!sync.traits().uses_collective) return "no gradient all-reduce";
  if (training.collective_algorithm->uses_servers()) return "a collective with servers";
  if (training.adaptive.enabled) return "adaptive compression";
  return {};
}

std::string replication_exclusion(const Scenario& scenario) {
  if (auto why = fiber_lane_exclusion(scenario); !why.empty()) return why;
  if (!scenario.training.sync_model->traits().rank_symmetric) return "the sync model's workers act by rank";
  const auto& st = scenario.training.stragglers;
  if (st.distribution != NoiseDistribution::NONE && st.sigma > 0) return "compute-time noise";
  return {};
}

WorkerPartition partition_workers(int workers, const std::vector<double>& speeds, int shown) {
  WorkerPartition p;
  const auto n = static_cast<std::size_t>(workers);
  std::vector<bool> runs(n, false);
  std::vector<int> representative(n, 0);  // per rank: the lowest rank of its speed
  std::map<double, int> first;            // speed -> the lowest rank that has it
  for (int r = 0; r < workers; ++r) {
    const double speed = speeds.empty() ? 1.0 : speeds[static_cast<std::size_t>(r)];
    const auto [at, fresh] = first.emplace(speed, r);
    representative[static_cast<std::size_t>(r)] = at->second;
    if (fresh || r < shown) runs[static_cast<std::size_t>(r)] = true;
  }
  std::vector<int> slot_of_rank(n, -1);
  for (int r = 0; r < workers; ++r)
    if (runs[static_cast<std::size_t>(r)]) {
      slot_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(p.simulated.size());
      p.simulated.push_back(r);
    }
  p.slot_of.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    p.slot_of[r] = runs[r] ? slot_of_rank[r] : slot_of_rank[static_cast<std::size_t>(representative[r])];
  return p;
}

std::optional<WorkerPartition> worker_partition(const Scenario& scenario) {
  if (!replication_exclusion(scenario).empty()) return std::nullopt;
  const int workers = scenario.platform.workers;
  const int shown = scenario.output.timeline ? std::min(scenario.output.timeline_workers, workers) : 0;
  auto p = partition_workers(workers, scenario.training.stragglers.speed_factors, shown);
  if (static_cast<int>(p.simulated.size()) == workers) return std::nullopt;
  return p;
}

}  // namespace ddlsim::sim::detail
