// ddlsim: the transfers of a collective's rank schedules and the order they can run in -- every
// send matched with its receive (in program order per pair), each transfer's round (the earliest
// wave of posted steps both its sides belong to) and a dependency order. The contention cost
// (models/network_cost.cpp) prices them on a routed network.
#pragma once

#include "models/collective.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace ddlsim::models::detail {

struct ScheduleTransfer {
  int src = 0, dst = 0;
  int send_step = 0, recv_step = 0;  // flattened step ids of its two sides
  double bytes = 0;
  int round = 0;                     // set by order_transfers
};

struct ScheduleGraph {
  int ranks = 0;
  std::vector<int> first;          // rank r's steps have ids first[r] .. first[r + 1] - 1
  std::vector<int> step_rank;      // per step id
  std::vector<int> latency_steps;  // per step id
  std::vector<int> count;          // per step id: the transfers it takes part in
  std::vector<ScheduleTransfer> transfers;
  [[nodiscard]] int steps_of(int rank) const {
    return first[static_cast<std::size_t>(rank) + 1] - first[static_cast<std::size_t>(rank)];
  }
};

/// Every rank's schedule of `algorithm` for `bytes` (`pipelined`: its phases), one rank at a time,
/// flattened and matched. nullopt once the sends or receives exceed `max_ends` (a budget: every
/// transfer crosses at least one link), and for windowed steps (RankStep::window: gloo_ring), whose
/// overlap across steps the rounds cannot express; the caller then uses the closed form. Throws std::logic_error for a peer outside the group or an
/// unmatched send.
std::optional<ScheduleGraph> flatten_schedules(const Collective& algorithm, const CollectiveGroup& group, double bytes,
                                               bool pipelined, std::int64_t max_ends);

/// Sets every transfer's round and returns the transfers in an order where each comes after every
/// transfer it depends on. Throws std::logic_error if the schedule deadlocks.
std::vector<int> order_transfers(ScheduleGraph& graph);

}  // namespace ddlsim::models::detail
