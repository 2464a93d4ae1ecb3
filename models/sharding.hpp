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

#include <string>
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

}  // namespace ddlsim::models
