// ddlsim: the work estimates of `ddlsim collectives` (app/collectives_command.hpp) and
// `ddlsim schedule` (app/schedule_command.hpp).
//
// The model of `ddlsim run`'s estimate (scenario/work_estimate.hpp, its constants in
// scenario/work_constants.hpp) applied to one comparison: the platform (the graph; at flow fidelity
// SimGrid's hosts, links and one actor per rank), then per algorithm compared at flow fidelity
// its flows (every rank's sends, counted from a few ranks' schedules) and the schedules the ranks
// hold while it runs, with the flows of its widest step in flight. The closed forms cost next to
// nothing. Each algorithm's term names the option that scales it: --params/NAME when its params
// are given, else --workers. check_work (scenario/work_estimate.hpp) refuses it past the same limits
// as a run.
#pragma once

#include "engine/collective_compare.hpp"
#include "scenario/work_estimate.hpp"

namespace ddlsim::sim {

WorkEstimate estimate_compare(const CompareWork& work);

/// `ddlsim schedule`: every rank's operations of one call of `runs` become JSON objects (every send
/// has its receive: twice the sends), held as one document before it is printed. `path` names
/// what scales it (--workers or --params).
WorkEstimate estimate_schedule(const models::Collective& runs, const models::CollectiveGroup& group, double bytes,
                               bool pipelined, const std::string& path);

}  // namespace ddlsim::sim
