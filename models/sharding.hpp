// ddlsim: sharded data parallelism's closed forms: the memory each rank holds and the bytes each
// rank sends per iteration under ZeRO's stages and PyTorch FSDP's sharding strategies.
//
// ZeRO (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
// SC 2020): with Psi parameters, N data-parallel ranks and mixed-precision Adam (fp16 parameters and
// gradients, 2 + 2 bytes per parameter; fp32 master parameters, momentum and variance, K = 12 bytes),
//   stage 0 (plain data parallelism)         (2 + 2 + K) Psi            per rank
//   stage 1 (P_os, optimizer states sharded) 2 Psi + 2 Psi + K Psi / N
//   stage 2 (P_os+g, gradients too)          2 Psi + (2 + K) Psi / N
//   stage 3 (P_os+g+p, parameters too)       (2 + 2 + K) Psi / N
// (section 5, Figure 1: Psi = 7.5 B, N = 64 gives 120, 31.4, 16.6 and 1.9 GB). Its communication
// (section 7): data parallelism all-reduces the gradients, 2 Psi (N - 1) / N elements sent per rank
// by a bandwidth-optimal reduce-scatter + all-gather; stages 1 and 2 reduce-scatter the gradients
// and all-gather the updated parameters, the same 2 Psi; stage 3 all-gathers every parameter before
// its use in the forward pass, again in the backward pass, and reduce-scatters the gradients:
// 3 Psi, 1.5 x data parallelism.
//
// FSDP (Zhao et al., "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB 2023,
// section 3.2): NO_SHARD is stage 0, SHARD_GRAD_OP stage 2 (parameters gathered once at the forward
// pass and kept through the backward pass), FULL_SHARD stage 3. HYBRID_SHARD shards over a shard
// group of S ranks (a node) and replicates over the R = N / S groups: the all-gathers and the
// reduce-scatter run inside the shard group, and each rank's gradient shard (Psi / S) is then
// all-reduced across the R replicas; what a rank holds is sharded over S, not N.
//
// Every size here is in bytes and per rank; the collectives are bandwidth-optimal (each rank sends
// (G - 1) / G of the gathered or reduced data in a group of G).
#pragma once

#include <cstddef>
#include <vector>

namespace ddlsim::models {

/// What sharded data parallelism shards: ZeRO's stage (0 to 3) over shard groups of `shard_ranks`
/// of the `ranks` data-parallel ranks (`shard_ranks` = `ranks` unless hybrid; it divides `ranks`).
struct Sharding {
  int stage = 0;
  int ranks = 1;
  int shard_ranks = 1;

  [[nodiscard]] bool hybrid() const { return shard_ranks < ranks; }
  [[nodiscard]] int replicas() const { return ranks / shard_ranks; }
};

/// Bytes per parameter of each kind of state (the defaults: ZeRO's mixed-precision Adam, 16 in all).
struct StateBytes {
  double parameter_bytes = 2;  // the working copy the forward and backward passes read (fp16)
  double gradient_bytes = 2;   // fp16 gradients, also what the reduce-scatter and all-reduce carry
  double optimizer_bytes = 12; // K: fp32 master parameters, momentum and variance
};

/// What one rank holds between iterations (the sharded state; a stage-3 rank also gathers units
/// while it computes: peak_gathered_bytes).
struct RankMemory {
  double parameters_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  [[nodiscard]] double total_bytes() const { return parameters_bytes + gradients_bytes + optimizer_bytes; }
};

/// The bytes one rank sends per iteration, by collective.
struct RankTraffic {
  double all_gather_bytes = 0;      // parameters gathered (stage 3: forward and backward)
  double reduce_scatter_bytes = 0;  // gradients reduced to their shard owners
  double all_reduce_bytes = 0;      // stage 0's gradient all-reduce, or hybrid's across replicas
  [[nodiscard]] double total_bytes() const { return all_gather_bytes + reduce_scatter_bytes + all_reduce_bytes; }
};

/// Throws std::invalid_argument naming the field unless stage is 0..3, ranks >= 1 and shard_ranks
/// is in [1, ranks] and divides ranks.
void check_sharding(const Sharding& sharding);

/// The state one rank holds for a model of `parameters` parameters (ZeRO section 5).
[[nodiscard]] RankMemory rank_memory(double parameters, const Sharding& sharding, const StateBytes& bytes = {});

/// The bytes one rank sends per iteration (ZeRO section 7; FSDP's hybrid sharding).
[[nodiscard]] RankTraffic rank_traffic(double parameters, const Sharding& sharding, const StateBytes& bytes = {});

/// The most parameter bytes a stage-3 rank holds gathered at once while it computes, for units
/// (FSDP's wrapped modules) of `unit_parameters` parameters in forward order: the largest unit, or
/// with `prefetch` (the next unit's all-gather issued while the current one computes) the largest
/// two consecutive units.
[[nodiscard]] double peak_gathered_bytes(const std::vector<double>& unit_parameters, bool prefetch,
                                         const StateBytes& bytes = {});

/// A strategy by name (training.sharding.strategy): ZeRO's stages as DeepSpeed runs them, FSDP's
/// sharding strategies as PyTorch runs them (docs/scenario.md, "Sharded data parallelism").
enum class ShardingStrategy { NONE, ZERO1, ZERO2, ZERO3, FSDP_FULL_SHARD, FSDP_SHARD_GRAD_OP, FSDP_HYBRID_SHARD };
/// FSDP's backward_prefetch: when the all-gather of the unit that runs backward next is issued.
enum class BackwardPrefetch { PRE, POST, NONE };

/// ZeRO's stage a strategy shards to (0 for NONE).
[[nodiscard]] int stage_of(ShardingStrategy strategy);
/// True for the strategies that all-gather each unit's parameters before its forward (FSDP's, and
/// ZeRO-3); false for ZeRO-1 and ZeRO-2, which keep every parameter and all-gather after the step.
[[nodiscard]] bool gathers_per_unit(ShardingStrategy strategy);

/// A unit: the contiguous layers [first_layer, end_layer) in forward order whose parameters are
/// gathered and whose gradients are reduce-scattered together (FSDP's wrapped module, one flat
/// parameter; ZeRO-3's prefetch granule).
struct ShardedUnit {
  std::size_t first_layer = 0;
  std::size_t end_layer = 0;
  double bytes = 0;       // gradient bytes in the profile's dtype: what its all-gather and reduce-scatter carry
  double parameters = 0;
};

/// The profile's layers cut into `count` contiguous units of about equal gradient bytes, in forward
/// order: a unit closes once it holds (bytes not yet in a closed unit) / (units still open); the
/// last takes the rest. Layers without gradient bytes join the unit they sit in. 1 <= count <=
/// layers (else invalid_argument).
[[nodiscard]] std::vector<ShardedUnit> make_units(const std::vector<double>& layer_bytes,
                                                  const std::vector<double>& layer_parameters, int count);

/// One collective of a sharded iteration: which of TrainingPlan::buckets it is.
enum class ShardedCollective { ALL_GATHER, REDUCE_SCATTER, REPLICA_ALL_REDUCE };

/// What a sharded iteration communicates, in the order of the plan's buckets (each collective is a
/// bucket of its own, so the engine records its arrival, busy time and traffic like a gradient
/// bucket's). Built by plan_sharded_iteration; replayed by replay_sharded_iteration.
struct ShardedPlan {
  ShardingStrategy strategy = ShardingStrategy::NONE;
  Sharding sharding;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::PRE;
  /// Per-unit strategies: the units in forward order. ZeRO-1/2: the gradient buckets in backward
  /// order (TrainingPlan's usual buckets), each reduce-scattered, then all-gathered after the step.
  std::vector<ShardedUnit> units;
  std::vector<int> forward_gather;   // per unit: its all-gather before its forward (empty: none)
  std::vector<int> backward_gather;  // per unit: its all-gather before its backward (empty: none)
  std::vector<int> reduce_scatter;   // per unit (ZeRO-1/2: per gradient bucket)
  std::vector<int> replica_reduce;   // hybrid: per unit, its shard all-reduced across the replicas
  std::vector<int> step_gather;      // ZeRO-1/2: per gradient bucket, after the optimizer step
  /// Per plan bucket: what it runs and its bytes (the collective's M: gathered output, reduced input).
  std::vector<ShardedCollective> kinds;
  /// The optimizer step's share each rank runs: 1 / shard group (it updates its shard only).
  double optimizer_fraction = 1;
};

}  // namespace ddlsim::models
