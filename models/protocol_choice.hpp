// ddlsim: the protocol a collective call runs with, for a library that picks one per call.
//
// NCCL chooses, for every collective call, the (algorithm, protocol) whose predicted time is least:
// src/graph/tuning.cc (at 5067397) predicts time = latency + bytes / bandwidth per protocol
// (ncclTopoGetAlgoTime: the protocol's base latency, its per-step hardware latency, and its
// bandwidth: LL at half the bus bandwidth, LL128 at 120/128, Simple at all of it), and the
// enqueue path takes the minimum. The `nccl` software preset does the same with ddlsim's own
// prediction: among its protocols (nccl_ll, nccl_ll128, nccl_simple) the call runs the one whose
// call cost + closed form of the algorithm for this call's bytes, on this network, is least; ties
// go to the earlier (LL before LL128 before Simple). Both faces ask here, so a flow run and its
// closed form run the same protocol.
#pragma once

#include "models/collective.hpp"
#include "models/software_cost.hpp"

#include <memory>

namespace ddlsim::models {

struct CallProtocol {
  std::shared_ptr<const SoftwareCost> software;  // what the call's messages pay (null: ideal)
  double call_cost_s = 0;                        // the call's fixed cost
};

/// The software and call cost of one call of `algo` for `bytes` under `ab.software`. A preset
/// that does not pick per call gives itself and `call_cost_s`; `nccl` gives the protocol of least
/// call cost + closed form, with that protocol's call cost unless `call_cost_given` (the scenario
/// set network.collective_call_cost: then `call_cost_s` for every protocol).
CallProtocol call_protocol(const Collective& algo, const CollectiveGroup& group, double bytes, const AlphaBeta& ab,
                           double call_cost_s, bool call_cost_given);

/// `ab` with `software` in place of its own.
AlphaBeta with_software(AlphaBeta ab, std::shared_ptr<const SoftwareCost> software);

}  // namespace ddlsim::models
