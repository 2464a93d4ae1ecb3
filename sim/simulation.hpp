// ddlsim: one simulation run on SimGrid (one engine per process).
//
// Builds the engine with the scenario's network model, emits the platform,
// starts per worker a compute actor running the sync model's worker loop
// (trace replay) and a communication-stream actor executing its submitted
// communications in order, plus one actor per parameter server when the sync
// model uses servers; collects typed records for analysis/.
#pragma once

#include "sim/collective_group.hpp"
#include "models/adaptive_compression.hpp"
#include "sim/scenario.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct IterationRecord {
  double start_s = 0;
  double end_s = 0;
  double compute_s = 0;          // compute time (after straggler factors)
  double exposed_comm_s = 0;     // time blocked waiting for the communication stream
  double comm_busy_s = 0;        // time the communication stream spent on this iteration's requests
  double straggler_wait_s = 0;   // time this worker's collectives waited for the last peer to arrive
  double staleness_wait_s = 0;   // time this worker's pulls were held by a staleness bound (ssp)
  double codec_s = 0;            // of compute_s: encoding and decoding compressed buckets
  std::int64_t events_sent = -1;     // event-driven sync models: messages sent (-1: not one)
  std::int64_t events_possible = 0;  // ... and what the always-send baseline would have sent
  std::vector<double> arrivals;  // per bucket: when the communication stream started it (internal)
  std::vector<double> held;      // per bucket: the longest hold of its pulls over servers (internal)
};

struct IterationCompression {
  int variant = -1;  // adaptive compression: the candidate (index); -1: the scenario's compressor
  double cr = 1;
  std::string collective;
  bool exploring = false;
};

struct WorkerRecord {
  std::vector<IterationRecord> iterations;
  double bytes_sent = 0;
  std::int64_t messages_sent = 0;
};

/// One timeline event (Chrome trace "complete" event).
struct TraceEvent {
  int pid = 0;          // worker rank, or workers + server index
  int tid = 0;          // 0 compute, 1 communication
  std::string name;
  std::string category; // io, forward, backward, optimizer, update, allreduce, push_pull
  double start_s = 0;
  double duration_s = 0;
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
  std::vector<std::int64_t> staleness;  // one entry per applied gradient shard (asynchronous models)
  std::vector<std::int64_t> neighbour_staleness;  // per neighbour model averaged in (asynchronous gossip), iterations
  std::vector<TraceEvent> timeline;
  std::vector<LinkRecord> links;
  double makespan_s = 0;
  double alpha_s = 0;          // the alpha the analytic mode used
  double beta_s_per_byte = 0;  // the beta the analytic mode used
  std::optional<models::LinkClass> analytic_local;  // the intra-node pair (hierarchical platforms)
  int buckets = 0;
  std::vector<std::string> notes;  // how the run was carried out, where it is worth saying (printed on stderr)
  std::vector<CollectiveChoiceRecord> collective_choices;  // "auto": its pick per distinct bucket size
  std::vector<double> bucket_bytes;                          // dense gradient bytes per bucket
  std::vector<models::BucketCompression> compression;        // per bucket, under a compressor
  /// Per iteration: the fraction of gradient elements sent (k/n; 1 dense), the gradient
  /// collective(s) it ran ("a+b" when buckets differ; "none" without one), and whether
  /// adaptive compression was exploring.
  std::vector<IterationCompression> iteration_compression;
  /// Adaptive compression: its explorations and the network it probed (per iteration).
  std::vector<models::Exploration> explorations;
  std::vector<models::NetworkProbe> probes;
};

/// Called when worker 0 finishes an iteration: (iterations done, iterations, simulated seconds).
using ProgressCallback = std::function<void(int, int, double)>;

/// Runs the scenario. `engine_args` are SimGrid flags (--cfg=..., --log=...).
/// Throws std::runtime_error on a simulated deadlock.
SimulationResult simulate(const Scenario& scenario, const std::vector<std::string>& engine_args,
                          const ProgressCallback& progress = {});

/// Per bucket under the scenario's compressor: the bytes its collective carries (a gathering
/// compressor's all-gather: every worker's wire bytes), encode and decode seconds (a gathered
/// bucket decodes every worker's encoding). Empty without a compressor.
std::vector<models::BucketCompression> compress_buckets(const Scenario& scenario, const std::vector<models::Bucket>& buckets);
/// The same for compressor `comp` (adaptive compression: the scenario's at one candidate ratio).
std::vector<models::BucketCompression> compress_buckets(const Scenario& scenario, const models::Compressor& comp,
                                                        const std::vector<models::Bucket>& buckets);

/// The alpha (worst host-to-host path latency from worker 0) and beta (inverse
/// of the slowest link's bandwidth) used by analytic fidelity; on a platform of
/// multi-GPU nodes (Topology::gpus_per_node > 0) also the intra-node pair `local`:
/// twice the worst worker-link latency and the inverse of the slowest worker link.
models::AlphaBeta analytic_alpha_beta(const platforms::Topology& topology);

}  // namespace ddlsim::sim
