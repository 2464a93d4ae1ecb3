#include "models/sharded_iteration.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::models {

int stage_of(ShardingStrategy strategy) {
  switch (strategy) {
    case ShardingStrategy::NONE: return 0;
    case ShardingStrategy::ZERO1: return 1;
    case ShardingStrategy::ZERO2:
    case ShardingStrategy::FSDP_SHARD_GRAD_OP: return 2;
    case ShardingStrategy::ZERO3:
    case ShardingStrategy::FSDP_FULL_SHARD:
    case ShardingStrategy::FSDP_HYBRID_SHARD: return 3;
  }
  return 0;
}

bool gathers_per_unit(ShardingStrategy strategy) {
  return strategy != ShardingStrategy::NONE && strategy != ShardingStrategy::ZERO1 && strategy != ShardingStrategy::ZERO2;
}

std::vector<ShardedUnit> make_units(const std::vector<double>& layer_bytes, const std::vector<double>& layer_parameters,
                                    int count) {
  const std::size_t layers = layer_bytes.size();
  if (count < 1 || static_cast<std::size_t>(count) > layers)
    throw std::invalid_argument(fmt::format("units: expected 1 to {} (the profile's layers), got {}", layers, count));
  double total = 0;
  for (double b : layer_bytes) total += b;
  std::vector<ShardedUnit> out;
  ShardedUnit open;
  double closed = 0;  // bytes of the units closed so far
  for (std::size_t l = 0; l < layers; ++l) {
    open.end_layer = l + 1;
    open.bytes += layer_bytes[l];
    open.parameters += l < layer_parameters.size() ? layer_parameters[l] : 0.0;
    // A unit closes once it holds its share of what the closed units left, (total - closed) /
    // units still open (so one huge layer, an embedding, does not leave a run of tiny units behind
    // it), keeping a layer for each unit still to come; the last takes the rest.
    const std::size_t still = static_cast<std::size_t>(count) - out.size() - 1;
    if (still == 0) continue;
    const bool full = open.bytes >= (total - closed) / static_cast<double>(still + 1) * (1 - 1e-12);
    if (full || layers - (l + 1) == still) {
      closed += open.bytes;
      out.push_back(open);
      open = ShardedUnit{l + 1, l + 1, 0, 0};
    }
  }
  out.push_back(open);
  return out;
}

ShardedIteration plan_sharded_iteration(ShardingStrategy strategy, const Sharding& sharding, BackwardPrefetch prefetch,
                                        const Profile& profile, int units, const std::vector<Bucket>& gradient_buckets) {
  if (strategy == ShardingStrategy::NONE) throw std::invalid_argument("strategy: no sharding has no sharded iteration");
  check_sharding(sharding);
  auto plan = std::make_shared<ShardedPlan>();
  plan->strategy = strategy;
  plan->sharding = sharding;
  plan->backward_prefetch = prefetch;
  plan->optimizer_fraction = 1.0 / sharding.shard_ranks;
  ShardedIteration out;
  auto add = [&](std::vector<int>& into, ShardedCollective kind, const Bucket& b) {
    into.push_back(static_cast<int>(out.buckets.size()));
    out.buckets.push_back(b);
    plan->kinds.push_back(kind);
  };
  if (gathers_per_unit(strategy)) {
    std::vector<double> bytes, params;
    for (const auto& l : profile.layers) bytes.push_back(l.grad_bytes), params.push_back(static_cast<double>(l.parameters));
    plan->units = make_units(bytes, params, units);
    auto bucket_of = [](const ShardedUnit& u) { return Bucket{u.end_layer - 1, u.first_layer, u.bytes}; };
    for (const auto& u : plan->units) add(plan->forward_gather, ShardedCollective::ALL_GATHER, bucket_of(u));
    if (stage_of(strategy) == 3)
      for (const auto& u : plan->units) add(plan->backward_gather, ShardedCollective::ALL_GATHER, bucket_of(u));
    for (const auto& u : plan->units) add(plan->reduce_scatter, ShardedCollective::REDUCE_SCATTER, bucket_of(u));
    if (sharding.hybrid())
      for (const auto& u : plan->units)
        add(plan->replica_reduce, ShardedCollective::REPLICA_ALL_REDUCE,
            Bucket{u.end_layer - 1, u.first_layer, u.bytes / sharding.shard_ranks});
  } else {
    for (const auto& b : gradient_buckets) add(plan->reduce_scatter, ShardedCollective::REDUCE_SCATTER, b);
    for (const auto& b : gradient_buckets) add(plan->step_gather, ShardedCollective::ALL_GATHER, b);
  }
  out.plan = std::move(plan);
  return out;
}

namespace {

/// Hybrid sharding's groups of worker `rank`: its shard group (the S consecutive ranks it shares a
/// node with, FSDP's intra-node process group) or its replica group (the ranks with its place in
/// every other shard group, the inter-node one). Empty without hybrid sharding: all workers.
std::vector<int> group_of(const Sharding& s, int rank, ShardedCollective kind) {
  std::vector<int> out;
  if (!s.hybrid()) return out;
  const int size = s.shard_ranks;
  if (kind == ShardedCollective::REPLICA_ALL_REDUCE)
    for (int g = 0; g < s.replicas(); ++g) out.push_back(g * size + rank % size);
  else
    for (int i = 0; i < size; ++i) out.push_back(rank / size * size + i);
  return out;
}

void issue(Runtime& rt, const TrainingPlan& plan, int bucket) {
  const auto kind = plan.sharded->kinds.at(static_cast<std::size_t>(bucket));
  const auto request = kind == ShardedCollective::ALL_GATHER       ? CommRequest::Kind::ALLGATHER
                       : kind == ShardedCollective::REDUCE_SCATTER ? CommRequest::Kind::REDUCE_SCATTER
                                                                   : CommRequest::Kind::ALLREDUCE;
  rt.submit(CommRequest{request, bucket, plan.buckets.at(static_cast<std::size_t>(bucket)).bytes,
                        group_of(plan.sharded->sharding, rt.rank(), kind), 0});
}

/// Per-unit strategies: the forward and backward passes unit by unit, gathers and reduce-scatters
/// issued as FSDP issues them (the top of models/sharded_iteration.hpp).
void replay_units(Runtime& rt, const TrainingPlan& plan) {
  const Profile& p = *plan.profile;
  const ShardedPlan& s = *plan.sharded;
  const std::size_t units = s.units.size();
  issue(rt, plan, s.forward_gather.front());
  for (std::size_t u = 0; u < units; ++u) {
    rt.wait_comm_through(s.forward_gather[u]);
    if (u + 1 < units) issue(rt, plan, s.forward_gather[u + 1]);
    rt.compute_layers(p.layers, s.units[u].first_layer, s.units[u].end_layer, Phase::FORWARD);
  }
  const bool gathers = !s.backward_gather.empty();
  if (gathers) issue(rt, plan, s.backward_gather.back());
  for (std::size_t u = units; u-- > 0;) {
    const bool next = gathers && u > 0;
    if (gathers) rt.wait_comm_through(s.backward_gather[u]);
    if (next && s.backward_prefetch == BackwardPrefetch::PRE) issue(rt, plan, s.backward_gather[u - 1]);
    rt.compute_layers(p.layers, s.units[u].first_layer, s.units[u].end_layer, Phase::BACKWARD);
    if (next && s.backward_prefetch == BackwardPrefetch::POST) issue(rt, plan, s.backward_gather[u - 1]);
    issue(rt, plan, s.reduce_scatter[u]);
    // Hybrid: the shard's gradients all-reduced across the replicas at once (FSDP's _reduce_grad).
    if (!s.replica_reduce.empty()) issue(rt, plan, s.replica_reduce[u]);
    if (next && s.backward_prefetch == BackwardPrefetch::NONE) issue(rt, plan, s.backward_gather[u - 1]);
  }
  rt.wait_comm();
}

/// ZeRO-1 and ZeRO-2: backward with each gradient bucket reduce-scattered once ready (as
/// replay_iteration submits its all-reduces).
void replay_buckets(Runtime& rt, const TrainingPlan& plan) {
  const Profile& p = *plan.profile;
  const ShardedPlan& s = *plan.sharded;
  rt.compute_layers(p.layers, 0, p.layers.size(), Phase::FORWARD);
  std::size_t next = 0;
  const std::size_t buckets = s.reduce_scatter.size();
  auto bucket = [&](std::size_t i) { return plan.buckets.at(static_cast<std::size_t>(s.reduce_scatter[i])); };
  for (std::size_t k = p.layers.size(); k > 0;) {
    const bool at_bucket = plan.overlap && next < buckets && bucket(next).last_layer < k;
    const std::size_t stop = at_bucket ? bucket(next).last_layer : 0;
    rt.compute_layers(p.layers, stop, k, Phase::BACKWARD);
    if (at_bucket) issue(rt, plan, s.reduce_scatter[next++]);
    k = stop;
  }
  for (; next < buckets; ++next) issue(rt, plan, s.reduce_scatter[next]);
  rt.wait_comm();
}

}  // namespace

void replay_sharded_iteration(Runtime& rt, const TrainingPlan& plan) {
  const Profile& p = *plan.profile;
  const ShardedPlan& s = *plan.sharded;
  replay_preamble(rt, plan);
  if (s.units.empty())
    replay_buckets(rt, plan);
  else
    replay_units(rt, plan);
  if (p.optimizer_s > 0) rt.compute(p.optimizer_s * s.optimizer_fraction, Phase::OPTIMIZER, "optimizer (own shard)");
  if (s.step_gather.empty()) return;
  for (int b : s.step_gather) issue(rt, plan, b);
  rt.wait_comm();
}

}  // namespace ddlsim::models
