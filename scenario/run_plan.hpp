// ddlsim: which engine runs a scenario, and which of its workers it simulates -- decided here once.
//
// The fiber lane (engine/fiber_lane.hpp) runs a scenario at analytic fidelity whose workers only
// compute and all-reduce among all workers: no parameter servers, no point-to-point or logical
// graph, no subgroup all-reduces, no adaptive compression. Every other scenario runs on SimGrid.
// On the fiber lane, workers that compute at the same speed, without noise, under a sync model
// whose worker loop does not depend on its rank, form a class: one of them is simulated and the
// others' records are its records (engine/worker_classes.hpp; docs/architecture.md, "Classes of
// identical workers"). The engine, the work estimate and the commands all read these answers.
#pragma once

#include "scenario/scenario.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::sim {

/// The workers a run simulates: one per class, and the ranks the timeline shows.
struct WorkerPartition {
  std::vector<int> simulated;  // the ranks run one by one, ascending: slot i runs rank simulated[i]
  std::vector<int> slot_of;    // per rank: the slot whose records are its own
};

namespace detail {

/// Empty when the fiber lane runs `scenario`; else why it runs on SimGrid (one phrase).
std::string fiber_lane_exclusion(const Scenario& scenario);
inline bool fiber_lane_applies(const Scenario& scenario) { return fiber_lane_exclusion(scenario).empty(); }

/// Empty when a fiber-lane run of `scenario` simulates one worker per class; else why every
/// worker is simulated (one phrase).
std::string replication_exclusion(const Scenario& scenario);

/// `speeds`: every rank's compute-time factor (empty: all equal); ranks 0..shown-1 are simulated
/// whatever their class (the timeline's); of the others, the lowest rank of each speed.
WorkerPartition partition_workers(int workers, const std::vector<double>& speeds, int shown);

/// The classes of `scenario`'s workers, or none when every worker is simulated (excluded, or no
/// two workers alike).
std::optional<WorkerPartition> worker_partition(const Scenario& scenario);

}  // namespace detail
}  // namespace ddlsim::sim
