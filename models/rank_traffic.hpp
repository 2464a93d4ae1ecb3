// ddlsim: what a rank of a collective sends, counted without running it, and its steps as the
// engine runs them (stepwise, or merged into phases when pipelined).
//
// The work estimate (scenario/work_estimate.cpp) counts a run's flows from these; the engine
// (engine/schedule_executor.hpp) runs the same step sources; at analytic fidelity, which runs no
// messages, schedule_traffic is what a rank counts as sent.
#pragma once

#include "models/collective.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace ddlsim::models {

struct TrafficCounters {
  double bytes_sent = 0;
  std::int64_t messages_sent = 0;  // algorithm messages (a pipelined phase counts as its steps)
  std::int64_t flows = 0;          // SimGrid communications actually simulated
};

/// What a rank of `algo` runs for `bytes`: its steps generated one at a time (stepwise) or its
/// merged phases (pipelined).
std::unique_ptr<StepSource> rank_steps(const Collective& algo, int rank, const CollectiveGroup& group, double bytes,
                                       bool stepwise);

/// Bytes and messages a schedule sends (used by analytic fidelity, which runs no messages).
TrafficCounters schedule_traffic(const std::vector<RankStep>& steps);

}  // namespace ddlsim::models
