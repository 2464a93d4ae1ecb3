#include "models/sharding.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::models {

void check_sharding(const Sharding& s) {
  if (s.stage < 0 || s.stage > 3) throw std::invalid_argument(fmt::format("stage: expected 0, 1, 2 or 3, got {}", s.stage));
  if (s.ranks < 1) throw std::invalid_argument(fmt::format("ranks: expected at least 1, got {}", s.ranks));
  if (s.shard_ranks < 1 || s.shard_ranks > s.ranks || s.ranks % s.shard_ranks != 0)
    throw std::invalid_argument(
        fmt::format("shard_ranks: expected a divisor of the {} ranks, got {}", s.ranks, s.shard_ranks));
  if (s.stage == 0 && s.hybrid())
    throw std::invalid_argument(fmt::format("shard_ranks: stage 0 shards nothing, so it has no shard group of {} "
                                            "ranks; use stage 1, 2 or 3",
                                            s.shard_ranks));
}

RankMemory rank_memory(double parameters, const Sharding& s, const StateBytes& b) {
  check_sharding(s);
  const double shards = s.stage == 0 ? 1.0 : s.shard_ranks;
  RankMemory m;
  m.parameters_bytes = parameters * b.parameter_bytes / (s.stage >= 3 ? shards : 1.0);
  m.gradients_bytes = parameters * b.gradient_bytes / (s.stage >= 2 ? shards : 1.0);
  m.optimizer_bytes = parameters * b.optimizer_bytes / (s.stage >= 1 ? shards : 1.0);
  return m;
}

RankTraffic rank_traffic(double parameters, const Sharding& s, const StateBytes& b) {
  check_sharding(s);
  RankTraffic t;
  if (s.stage == 0) {  // a reduce-scatter and an all-gather of the gradients among all the ranks
    t.all_reduce_bytes = 2 * parameters * b.gradient_bytes * (s.ranks - 1) / s.ranks;
    return t;
  }
  const double group = s.shard_ranks;
  const double gathers = s.stage == 3 ? 2 : 1;  // stage 3 gathers for the forward and the backward pass
  t.all_gather_bytes = gathers * parameters * b.parameter_bytes * (group - 1) / group;
  t.reduce_scatter_bytes = parameters * b.gradient_bytes * (group - 1) / group;
  if (s.hybrid()) {  // each rank's gradient shard all-reduced across the replicas
    const double replicas = s.replicas();
    t.all_reduce_bytes = 2 * (parameters / group) * b.gradient_bytes * (replicas - 1) / replicas;
  }
  return t;
}

double peak_gathered_bytes(const std::vector<double>& units, bool prefetch, const StateBytes& b) {
  double peak = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const double held = units[i] + (prefetch && i + 1 < units.size() ? units[i + 1] : 0.0);
    peak = std::max(peak, held);
  }
  return peak * b.parameter_bytes;
}

}  // namespace ddlsim::models
