// ddlsim: workers simulated once per class of identical workers (the fiber lane's replication).
//
// On the fiber lane (analytic fidelity, all-workers all-reduces only; engine/fiber_lane.hpp),
// workers that compute at the same speed, without noise, under a sync model whose worker loop
// does not depend on its rank (SyncModel::rank_symmetric) do the same things at the same times:
// their compute is the same, every closed-form collective starts at one rendezvous for all and
// ends at the same time on each (engine/analytic_round.cpp). Such a run simulates one worker per
// speed (the lowest rank that has it) and the ranks timeline.json shows; every other worker's
// records are those of the simulated worker of its class (iterations.csv, summary.json), and its
// traffic is what its own place in each collective's schedule sends, replayed over the sequence
// of collectives its class ran. Results equal those of every worker simulated one by one
// (tests/engine/worker_classes_test.cpp compares them); RunOptions::every_worker turns it off.
#pragma once

#include "scenario/run_plan.hpp"
#include "scenario/scenario.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ddlsim::models {
class Collective;
struct CollectiveGroup;
}  // namespace ddlsim::models

namespace ddlsim::sim {
struct WorkerRecord;
}

namespace ddlsim::sim::detail {

class WorkerClasses {
 public:
  /// `speeds`: every rank's compute-time factor (empty: all equal); `shown`: ranks 0..shown-1
  /// are simulated whatever their class (the timeline's).
  WorkerClasses(int workers, const std::vector<double>& speeds, int shown);
  /// The classes scenario/run_plan.hpp partitioned the workers into.
  explicit WorkerClasses(WorkerPartition partition);

  /// The ranks run one by one, ascending: slot i runs rank simulated()[i].
  [[nodiscard]] const std::vector<int>& simulated() const { return simulated_; }
  /// Per rank: the slot whose records are its own.
  [[nodiscard]] const std::vector<int>& slot_of() const { return slot_of_; }
  /// The slot of simulated rank `rank`.
  [[nodiscard]] int slot(int rank) const;

  /// Slot `slot` resolved a collective of `bucket` (its schedule rotated so that `root` plays
  /// rank 0) with `algorithm` for `bytes`: every worker of its records sends what its place in
  /// that schedule sends.
  void note_collective(int slot, int bucket, int root, const models::Collective& algorithm, double bytes);
  /// Adds every worker's traffic to `workers` (by rank), as each would have counted it itself.
  void add_traffic(const models::CollectiveGroup& group, std::vector<WorkerRecord>& workers) const;

 private:
  struct Call {  // a distinct (bucket, root, algorithm, bytes) a slot ran
    int bucket = 0;
    int root = 0;
    const models::Collective* algorithm = nullptr;
    double bytes = 0;
  };
  struct SlotCalls {
    std::vector<Call> distinct;                // in the order first run
    std::map<std::tuple<int, int, const models::Collective*, double>, int> index;  // -> its place in `distinct`
    std::vector<int> sequence;                 // every call, as an index into `distinct`
  };

  std::vector<int> simulated_;
  std::vector<int> slot_of_;
  std::vector<SlotCalls> calls_;  // per slot
};

/// The classes of `scenario`'s workers, or null when every worker is simulated (excluded, or
/// no two workers alike).
std::unique_ptr<WorkerClasses> worker_classes(const Scenario& scenario);

}  // namespace ddlsim::sim::detail
