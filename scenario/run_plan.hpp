// ddlsim: the plan of a run, decided here once, when the scenario is loaded (parse_scenario calls
// plan_run last and keeps it in Scenario::plan): which engine runs the scenario, which of its workers
// it simulates, the buckets and their compression, the collective group and what "auto" picks per
// bucket, and the analytic network. Every later layer reads the plan; none re-derives it.
//
// The fiber lane (engine/fiber_lane.hpp) runs a scenario at analytic fidelity whose workers only
// compute and all-reduce among all workers: no parameter servers, no point-to-point or logical
// graph, no subgroup all-reduces, no adaptive compression. Every other scenario runs on SimGrid.
// On the fiber lane, workers that compute at the same speed, without noise, under a sync model
// whose worker loop does not depend on its rank, form a class: one of them is simulated and the
// others' records are its records (engine/worker_classes.hpp; docs/architecture.md, "Classes of
// identical workers"). The engine, the work estimate and the commands all read these answers.
#pragma once

#include "models/sync_model.hpp"
#include "scenario/analytic_network.hpp"
#include "scenario/collective_group.hpp"
#include "scenario/scenario.hpp"

#include <map>
#include <memory>

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::sim {

/// The workers a run simulates: one per class, and the ranks the timeline shows.
struct WorkerPartition {
  std::vector<int> simulated;  // the ranks run one by one, ascending: slot i runs rank simulated[i]
  std::vector<int> slot_of;    // per rank: the slot whose records are its own
};

/// What a run of a scenario runs by (Scenario::plan).
struct RunPlan {
  /// Empty when the fiber lane runs the scenario; else why it runs on SimGrid (one phrase).
  std::string fiber_lane_exclusion;
  /// Empty when a fiber-lane run simulates one worker per class; else why every worker is simulated.
  std::string replication_exclusion;
  /// On SimGrid, the actors: per worker its compute actor and `streams_per_worker` communication
  /// streams; per parameter server a server loop (a parameter-server sync model) and a collective
  /// server (a collective with servers, at flow fidelity). The commands check their count against
  /// the process's room before the engine exists; the engine creates them.
  int streams_per_worker = 1;
  bool server_loops = false;
  bool collective_servers = false;
  /// The classes of workers the fiber lane simulates one of each (none: every worker; --every-worker
  /// runs every worker whatever this says).
  std::optional<WorkerPartition> classes;
  /// The collectives' group of workers and servers, with the platform's contention estimate.
  models::CollectiveGroup group;
  /// The analytic network at time 0 (the network model's factors applied; "auto" picks with it) and
  /// the network over time it comes from; a run takes its own copy (AnalyticNetwork::at extends it).
  models::AlphaBeta ab;
  std::shared_ptr<const AnalyticNetwork> network;
  /// What the sync models read: iterations, the buckets under the bucketing policy, their
  /// compression (and each adaptive candidate's), AR-Topk's selecting workers. `profile` is left
  /// null: a run points it at its scenario's profile.
  models::TrainingPlan training;
  /// Per bucket: submit to launch (Horovod's fusion cycle); empty: none.
  std::vector<double> launch_wait_s;
  /// The fraction of gradient elements the scenario's compressor sends, and each adaptive candidate's.
  double static_cr = 1;
  std::vector<double> variant_cr;
  /// What "auto" runs per bucket size as sent (empty for a plain algorithm and under adaptive compression).
  std::vector<CollectiveChoiceRecord> collective_choices;
  std::vector<ProtocolChoiceRecord> protocol_choices;  // software "nccl": its protocol per distinct bucket size
  /// What a reader of the results must know about how the plan was made (summary notes).
  std::vector<std::string> notes;

  /// The gradient collective resolved at load: a meta-collective ("auto" and its kin) picks, per
  /// size the plan calls it with among all workers (every bucket as sent), the algorithm that runs
  /// on the load-time group and alpha-beta. A run whose network changes (link traces) or whose
  /// bytes a controller changes (adaptive compression) resolves each call at its moment instead.
  struct Resolved {
    const models::Collective* algorithm = nullptr;
    std::string name;  // what the records call it: the pick's name, or the collective's own
  };
  std::shared_ptr<const models::Collective> collective;  // the scenario's gradient collective
  std::string collective_name;                          // its name in the scenario
  std::map<double, Resolved> resolved;                  // by bytes per call

  [[nodiscard]] bool fiber_lane() const { return fiber_lane_exclusion.empty(); }
  [[nodiscard]] long actors_per_worker() const { return 1L + streams_per_worker; }
  [[nodiscard]] long actors_per_server() const { return (server_loops ? 1L : 0L) + (collective_servers ? 1L : 0L); }
  /// What the gradient collective runs for a call of `bytes` among all workers on the load-time
  /// network: resolved at load for the plan's sizes, resolved now for any other.
  [[nodiscard]] const models::Collective& gradient_collective(double bytes) const;
  /// Its name in the records (the pick's, or the collective's own).
  [[nodiscard]] std::string gradient_collective_name(double bytes) const;
};

/// The plan of `scenario` (parse_scenario calls it once the scenario is read and checked).
RunPlan plan_run(const Scenario& scenario);

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
