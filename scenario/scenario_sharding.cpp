// ddlsim: "training.sharding" -- sharded data parallelism (ZeRO's stages, FSDP's strategies): read,
// checked against what it composes with, planned into the iteration's collectives, and its memory
// per rank reported (docs/scenario.md, "Sharded data parallelism").
#include "models/sharded_iteration.hpp"
#include "models/units.hpp"
#include "scenario/run_plan.hpp"
#include "scenario/scenario.hpp"

#include <fmt/format.h>

namespace ddlsim::sim {
namespace {

struct StrategyName {
  models::ShardingStrategy strategy;
  const char* name;
};
using Strategy = models::ShardingStrategy;
constexpr StrategyName STRATEGIES[] = {{Strategy::NONE, "none"},
                                       {Strategy::ZERO1, "zero1"},
                                       {Strategy::ZERO2, "zero2"},
                                       {Strategy::ZERO3, "zero3"},
                                       {Strategy::FSDP_FULL_SHARD, "fsdp_full_shard"},
                                       {Strategy::FSDP_SHARD_GRAD_OP, "fsdp_shard_grad_op"},
                                       {Strategy::FSDP_HYBRID_SHARD, "fsdp_hybrid_shard"}};

constexpr const char* SHARDING_PATH = "/training/sharding";

std::string sharding_path(const char* key) { return fmt::format("{}/{}", SHARDING_PATH, key); }

/// The profile's bytes per parameter (what its gradients and, in the same dtype, its parameters take).
double profile_bytes_per_parameter(const models::Profile& p) {
  const auto params = p.parameters();
  if (params > 0) return p.grad_bytes() / static_cast<double>(params);
  return p.dtype == "fp32" ? 4.0 : 2.0;
}

models::Sharding sharding_of(const Scenario& s) {
  const auto& spec = s.training.sharding;
  return models::Sharding{models::stage_of(spec.strategy), s.platform.workers,
                          spec.strategy == Strategy::FSDP_HYBRID_SHARD ? spec.shard_ranks : s.platform.workers};
}

/// The most parameter bytes a rank holds gathered at once while it computes: stage 3, the largest two
/// consecutive units (the one computing and the one prefetched); SHARD_GRAD_OP, every unit (kept from
/// forward to backward); ZeRO-1 and ZeRO-2 hold every parameter anyway (no gathered copy).
double gathered_peak_bytes(const Scenario& s, const models::ShardedPlan& plan) {
  const auto& b = s.training.sharding.bytes_per_parameter;
  std::vector<double> units;
  for (const auto& u : plan.units) units.push_back(u.parameters);
  if (plan.units.empty()) return 0;
  if (models::stage_of(plan.strategy) == 3) return models::peak_gathered_bytes(units, true, b);
  double all = 0;
  for (double u : units) all += u;
  return all * b.parameter_bytes;
}

}  // namespace

ShardingSpec read_sharding(ObjectReader& r, const Scenario& s) {
  ShardingSpec spec;
  std::vector<std::string> names;
  for (const auto& e : STRATEGIES) names.emplace_back(e.name);
  spec.name = r.choice("strategy", names, "none");
  for (const auto& e : STRATEGIES)
    if (spec.name == e.name) spec.strategy = e.strategy;
  const auto& profile = s.workload.profile;  // read before training (the worker's workload comes after)
  const auto layers = static_cast<std::int64_t>(profile.layers.size());
  const bool per_unit = models::gathers_per_unit(spec.strategy);
  if (!spec.enabled() || !per_unit)
    for (const char* key : {"units", "backward_prefetch"})
      if (r.has(key))
        throw ConfigError(r.path_of(key),
                          fmt::format("only with a strategy that gathers each unit's parameters (\"zero3\", "
                                      "\"fsdp_full_shard\", \"fsdp_shard_grad_op\"), not \"{}\"",
                                      spec.name));
  spec.units = static_cast<int>(r.integer("units", layers, 1, layers));
  const std::string prefetch = r.choice("backward_prefetch", {"pre", "post", "none"}, "pre");
  spec.backward_prefetch = prefetch == "pre"    ? models::BackwardPrefetch::PRE
                           : prefetch == "post" ? models::BackwardPrefetch::POST
                                                : models::BackwardPrefetch::NONE;
  const double dtype_bytes = profile_bytes_per_parameter(profile);
  {
    ObjectReader b = r.object("bytes_per_parameter");
    spec.bytes_per_parameter.parameter_bytes = b.number("parameters", dtype_bytes, 0, 64);
    spec.bytes_per_parameter.gradient_bytes = b.number("gradients", dtype_bytes, 0, 64);
    // Adam's two fp32 moments, and under 16-bit training its fp32 master parameters (ZeRO's K = 12).
    spec.bytes_per_parameter.optimizer_bytes = b.number("optimizer_state", dtype_bytes >= 4 ? 8.0 : 12.0, 0, 64);
    b.finish();
  }
  spec.device_memory_bytes = r.bytes("device_memory", 0);
  if (spec.strategy == Strategy::FSDP_HYBRID_SHARD) {
    // FSDP's default shard group is a node: the platform's GPUs per node, where it has nodes.
    const int workers = s.platform.workers;
    const int per_node = s.platform.graph.gpus_per_node;
    const bool nodes = per_node > 1 && per_node < workers && workers % per_node == 0;
    if (!nodes && !r.has("shard_ranks"))
      throw ConfigError(r.path_of("shard_ranks"),
                        fmt::format("\"fsdp_hybrid_shard\" shards over groups of ranks: give the group's size, a "
                                    "divisor of the {} workers (a node's GPUs; the platform has no nodes to take "
                                    "it from)",
                                    workers));
    spec.shard_ranks = static_cast<int>(r.integer("shard_ranks", nodes ? per_node : 1, 1, workers));
    if (workers % spec.shard_ranks != 0)
      throw ConfigError(r.path_of("shard_ranks"), fmt::format("expected a divisor of the {} workers, got {}", workers,
                                                              spec.shard_ranks));
  } else if (r.has("shard_ranks")) {
    throw ConfigError(r.path_of("shard_ranks"),
                      fmt::format("only with \"fsdp_hybrid_shard\", not \"{}\" (which shards over every worker)",
                                  spec.name));
  }
  if (!spec.enabled())
    for (const char* key : {"bytes_per_parameter", "device_memory"})
      if (r.has(key)) throw ConfigError(r.path_of(key), "only with a \"strategy\" other than \"none\"");
  return spec;
}

void check_sharding_combination(const Scenario& s, bool collective_given) {
  const auto& spec = s.training.sharding;
  if (!spec.enabled()) return;
  const std::string strategy = sharding_path("strategy");
  const auto traits = s.training.sync_model->traits();
  if (s.training.sync.name != "bsp" || traits.uses_servers)
    throw ConfigError(strategy, fmt::format("sharded data parallelism is synchronous data parallelism without "
                                            "parameter servers: use sync model \"bsp\" with \"aggregation\": "
                                            "\"allreduce\", not \"{}\"{}",
                                            s.training.sync.name, traits.uses_servers ? " with parameter servers" : ""));
  if (s.training.compressor.name != "none")
    throw ConfigError(strategy, fmt::format("sharded data parallelism reduce-scatters dense gradients; compressor "
                                            "\"{}\" compresses all-reduced buckets: use \"none\"",
                                            s.training.compressor.name));
  if (collective_given && s.training.collective.name != "ring")
    throw ConfigError("/training/collective/name",
                      fmt::format("sharded data parallelism all-gathers parameters and reduce-scatters gradients with "
                                  "rings (NCCL's algorithm for both; ring_allgather and ring_reduce_scatter), and "
                                  "hybrid sharding all-reduces its shards with \"ring\": use \"ring\" or leave "
                                  "\"collective\" out, not \"{}\"",
                                  s.training.collective.name));
  const auto& b = s.training.bucketing;
  if (models::gathers_per_unit(spec.strategy)) {
    const auto& doc = s.document;
    if (doc.contains("training") && doc["training"].is_object() && doc["training"].contains("bucketing"))
      throw ConfigError("/training/bucketing",
                        fmt::format("strategy \"{}\" gathers and reduce-scatters unit by unit as backward makes "
                                    "each unit's gradients ready (training.sharding.units), not in buckets: remove "
                                    "\"bucketing\"",
                                    spec.name));
  } else {
    if (b.policy == BucketingPolicy::HOROVOD)
      throw ConfigError("/training/bucketing/policy",
                        fmt::format("strategy \"{}\" reduce-scatters DeepSpeed's buckets; \"horovod\" plans "
                                    "all-reduces at Horovod's cycles: use \"size\" (DeepSpeed's reduce_bucket_size) "
                                    "or \"ddp\"",
                                    spec.name));
    if (b.max_inflight > 1)
      throw ConfigError("/training/bucketing/max_inflight",
                        fmt::format("strategy \"{}\" runs its collectives on one stream, one at a time: use 1",
                                    spec.name));
    if (b.copy_bandwidth_Bps > 0)
      throw ConfigError("/training/bucketing/copy_bandwidth",
                        fmt::format("strategy \"{}\" reduce-scatters from flat gradient partitions: remove "
                                    "\"copy_bandwidth\"",
                                    spec.name));
  }
  if (s.training.adaptive.enabled)
    throw ConfigError("/training/adaptive_compression", "sharded data parallelism runs no compressor to adapt");
  if (spec.device_memory_bytes > 0) {
    const json j = sharding_settings(s);
    const double total = j["memory_per_rank"]["total_bytes"].get<double>();
    if (total > spec.device_memory_bytes)
      throw ConfigError(sharding_path("device_memory"),
                        fmt::format("strategy \"{}\" on {} workers holds {} per rank ({} parameters, {} gradients, {} "
                                    "optimizer state, {} gathered parameters at the peak; activations not counted), "
                                    "over the device's {}: shard further (a higher stage) or use more workers",
                                    spec.name, s.platform.workers, units::format_bytes(total),
                                    units::format_bytes(j["memory_per_rank"]["parameters_bytes"].get<double>()),
                                    units::format_bytes(j["memory_per_rank"]["gradients_bytes"].get<double>()),
                                    units::format_bytes(j["memory_per_rank"]["optimizer_state_bytes"].get<double>()),
                                    units::format_bytes(j["memory_per_rank"]["gathered_parameters_peak_bytes"].get<double>()),
                                    units::format_bytes(spec.device_memory_bytes)));
  }
}

void plan_sharding(const Scenario& s, models::TrainingPlan& training) {
  const auto& spec = s.training.sharding;
  if (!spec.enabled()) return;
  auto it = models::plan_sharded_iteration(spec.strategy, sharding_of(s), spec.backward_prefetch,
                                           s.workload.worker.profile, spec.units, training.buckets);
  training.buckets = std::move(it.buckets);
  training.sharded = std::move(it.plan);
  auto& registry = Registry<models::Collective>::instance();
  training.all_gather = registry.create("ring_allgather", json::object(), "", "", "collective");
  training.reduce_scatter = registry.create("ring_reduce_scatter", json::object(), "", "", "collective");
}

json sharding_settings(const Scenario& s) {
  const auto& spec = s.training.sharding;
  json j;
  j["strategy"] = spec.name;
  j["stage"] = models::stage_of(spec.strategy);
  j["shard_ranks"] = sharding_of(s).shard_ranks;
  if (spec.strategy == Strategy::FSDP_HYBRID_SHARD) {
    j["replicas"] = sharding_of(s).replicas();
    j["group_collectives_fidelity"] = "flow";  // collectives among groups run as flows at every fidelity
  }
  const auto& b = spec.bytes_per_parameter;
  j["bytes_per_parameter"] = {{"parameters", b.parameter_bytes}, {"gradients", b.gradient_bytes},
                              {"optimizer_state", b.optimizer_bytes}};
  const double params = static_cast<double>(s.workload.worker.profile.parameters());
  const auto held = models::rank_memory(params, sharding_of(s), b);
  models::ShardedPlan plan;
  if (s.plan && s.plan->training.sharded) plan = *s.plan->training.sharded;
  else {  // before the run plan exists (the load-time check): the same units
    std::vector<models::Bucket> none;
    plan = *models::plan_sharded_iteration(spec.strategy, sharding_of(s), spec.backward_prefetch,
                                           s.workload.worker.profile, spec.units, none).plan;
  }
  if (models::gathers_per_unit(spec.strategy)) {
    j["units"] = plan.units.size();
    j["backward_prefetch"] = spec.backward_prefetch == models::BackwardPrefetch::PRE    ? "pre"
                             : spec.backward_prefetch == models::BackwardPrefetch::POST ? "post"
                                                                                        : "none";
  }
  const double gathered = gathered_peak_bytes(s, plan);
  j["memory_per_rank"] = {{"parameters_bytes", held.parameters_bytes},
                          {"gradients_bytes", held.gradients_bytes},
                          {"optimizer_state_bytes", held.optimizer_bytes},
                          {"gathered_parameters_peak_bytes", gathered},
                          {"total_bytes", held.total_bytes() + gathered},
                          {"counts", "model state only: activations, buffers and the allocator's slack are not modelled"}};
  j["device_memory_bytes"] = spec.device_memory_bytes > 0 ? json(spec.device_memory_bytes) : json(nullptr);
  // What the collectives carry: the profile's gradient bytes, parameters gathered in the same dtype.
  const double wire = profile_bytes_per_parameter(s.workload.worker.profile);
  const auto traffic = models::rank_traffic(params, sharding_of(s), models::StateBytes{wire, wire, 0});
  j["closed_form_bytes_sent_per_rank_iteration"] = {{"all_gather", traffic.all_gather_bytes},
                                                    {"reduce_scatter", traffic.reduce_scatter_bytes},
                                                    {"all_reduce", traffic.all_reduce_bytes},
                                                    {"total", traffic.total_bytes()}};
  return j;
}

}  // namespace ddlsim::sim
