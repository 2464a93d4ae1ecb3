// ddlsim: one simulation run on SimGrid (one engine per process).
//
// Builds the engine with the scenario's network model, emits the platform,
// starts per worker a compute actor running the sync model's worker loop
// (trace replay) and a communication-stream actor executing its submitted
// communications in order, plus one actor per parameter server when the sync
// model uses servers; collects typed records for analysis/.
#pragma once

#include "scenario/collective_group.hpp"
#include "engine/iteration_records.hpp"
#include "models/adaptive_compression.hpp"
#include "models/convergence/async_replay.hpp"
#include "models/convergence/peer_training.hpp"
#include "scenario/scenario.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct WorkerRecord {
  std::vector<IterationRecord> iterations;  // only when simulate() is given no RecordSink
  double bytes_sent = 0;
  std::int64_t messages_sent = 0;
};

struct LinkRecord {
  std::string name;
  double bandwidth_Bps = 0;  // nominal, per direction
  double bytes = 0;          // carried during the run
  double utilization = 0;    // bytes / (bandwidth * makespan)
};

struct SimulationResult {
  std::vector<WorkerRecord> workers;
  double bytes_sent_by_servers = 0;
  std::int64_t messages_sent_by_servers = 0;
  IterationTotals totals;  // over the iterations every worker completed
  Histogram staleness;     // per applied gradient shard (asynchronous models), in updates
  Histogram neighbour_staleness;  // per neighbour model averaged in (asynchronous gossip), in iterations
  std::vector<TraceEvent> timeline;  // only when simulate() is given no RecordSink
  std::vector<LinkRecord> links;
  /// Why links.csv is left out (empty: it is written): analytic collectives too large to route.
  std::string links_omitted;
  double makespan_s = 0;
  /// Sync models with parameter servers: what shared the links among pushes and pulls, "fluid"
  /// (engine/fluid_links.hpp) or "simgrid" (its LMM), and why not the fluid links (empty: it ran).
  std::string push_pull_solver;
  std::string push_pull_solver_reason;
  bool stopped = false;  // RunOptions::stop_requested stopped the run (totals: the iterations completed)
  /// Stopped within an iteration on SimGrid: the engine and its actors are left in place, and the
  /// process must end with std::_Exit once the outputs are written (EngineSession::run_stoppable).
  bool engine_abandoned = false;
  double alpha_s = 0;          // the alpha the analytic mode used
  double beta_s_per_byte = 0;  // the beta the analytic mode used
  std::optional<models::LinkClass> analytic_local;  // the intra-node pair (hierarchical platforms)
  int buckets = 0;
  std::vector<std::string> notes;  // how the run was carried out, where it is worth saying (printed on stderr)
  std::vector<CollectiveChoiceRecord> collective_choices;  // "auto": its pick per distinct bucket size
  std::vector<ProtocolChoiceRecord> protocol_choices;      // software "nccl": its protocol per distinct bucket size
  std::vector<double> bucket_bytes;                          // dense gradient bytes per bucket
  std::vector<models::BucketCompression> compression;        // per bucket, under a compressor
  /// Per iteration: the fraction of gradient elements sent (k/n; 1 dense), the gradient
  /// collective(s) it ran ("a+b" when buckets differ; "none" without one), and whether
  /// adaptive compression was exploring. Only when simulate() is given no RecordSink.
  std::vector<IterationCompression> iteration_compression;
  /// Adaptive compression: its explorations and the network it probed (per iteration).
  std::vector<models::Exploration> explorations;
  std::vector<models::NetworkProbe> probes;
  /// With training.convergence under a parameter-server sync model: every update the servers
  /// applied, in order (models/convergence/async_replay.hpp).
  std::vector<models::convergence::Update> updates;
};

/// Called when every worker has ended an iteration: (iterations done, iterations, simulated seconds).
using ProgressCallback = std::function<void(int, int, double)>;

struct WorkPlan;  // scenario/work_estimate.hpp

struct RunOptions {
  ProgressCallback progress;
  /// Receives every completed iteration's records and every timeline event as the run produces
  /// them; they are then not kept in the result. Null: kept in SimulationResult::workers and
  /// ::timeline (tests).
  RecordSink* sink = nullptr;
  /// Asked after each completed iteration: true stops the run there (a signal, engine/run_control.hpp).
  std::function<bool()> stop_requested;
  /// Called once the plan is made, before the platform is built and anything runs: may refuse the
  /// run by throwing ConfigError (the work estimate, scenario/work_estimate.hpp).
  std::function<void(const WorkPlan&)> before_run;
  /// What the run does before it simulates ("building the platform"; a string literal), then
  /// nullptr once the engine runs (Progress::phase).
  std::function<void(const char*)> phase;
  /// Analytic fidelity runs on the fiber lane wherever it applies (engine/fiber_lane.hpp); true runs it
  /// on SimGrid actors instead (tests compare the two).
  bool simgrid_analytic = false;
  /// The fiber lane simulates one worker per class of identical workers where it can
  /// (engine/worker_classes.hpp); true simulates every worker (tests compare the two).
  bool every_worker = false;
  /// Decentralised sync models' co-simulated training (training.convergence with gossip or
  /// event_triggered): the worker loops drive it as they run. Null: none.
  models::convergence::PeerTraining* peer_training = nullptr;
  /// Adaptive compression with "gain_model": "live": the gains the co-simulated training measures
  /// as iterations complete (fed by the sink; analysis/convergence_outputs.hpp).
  const models::LiveGains* live_gains = nullptr;
};

/// Runs the scenario. `engine_args` are SimGrid flags (--cfg=..., --log=...).
/// Throws std::runtime_error on a simulated deadlock.
SimulationResult simulate(const Scenario& scenario, const std::vector<std::string>& engine_args,
                          const RunOptions& options = {});

}  // namespace ddlsim::sim
