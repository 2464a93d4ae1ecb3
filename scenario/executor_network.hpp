// ddlsim: what the schedule executor needs of the network model (engine/schedule_executor.hpp),
// and the analytic network reads too (scenario/analytic_network.hpp): plain C++, no SimGrid.
#pragma once

#include "models/software_cost.hpp"

#include <memory>

namespace ddlsim::sim {

/// What the executor needs of the network model: its factors (the SimGrid model applies them
/// to every flow; the executor applies them to the latencies it sleeps and to the software
/// costs it computes) and the library's software costs (null: ideal).
struct ExecutorNetwork {
  double latency_factor = 1;
  double bandwidth_factor = 1;
  std::shared_ptr<const models::SoftwareCost> software;
  /// False at packet fidelity: ns-3's TCP paces every flow, and SimGrid's binding takes no rate
  /// (a library's receiver-ready waits are still slept, its window caps are not applied).
  bool rate_caps = true;
};

}  // namespace ddlsim::sim
