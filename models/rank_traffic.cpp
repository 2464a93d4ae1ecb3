// ddlsim: what a rank of a collective sends (models/rank_traffic.hpp).
#include "models/rank_traffic.hpp"

namespace ddlsim::models {

std::unique_ptr<StepSource> rank_steps(const Collective& algo, int rank, const CollectiveGroup& group, double bytes,
                                       bool stepwise) {
  if (stepwise) return algo.rank_steps(rank, group, bytes);
  return std::make_unique<ScheduleSource>(algo.rank_phases(rank, group, bytes));
}

TrafficCounters schedule_traffic(const std::vector<RankStep>& steps) {
  TrafficCounters c;
  for (const auto& step : steps)
    for (const auto& op : step.ops)
      if (op.kind == RankOp::Kind::SEND) {
        c.bytes_sent += op.bytes;
        c.messages_sent += step.latency_steps;
      }
  return c;
}

}  // namespace ddlsim::models
