// ddlsim: the SyncModel interface and the Runtime facades it is written against.
//
// A sync model is written like the algorithm in its paper: a worker loop and,
// where it has one, a server loop, calling the Runtime. sim/ implements the
// facades on SimGrid; unit tests can implement them with small fakes. Models
// never read a clock or call SimGrid directly.
//
// Worker side: models/runtime.hpp; server side: models/server_runtime.hpp.
#pragma once

#include "models/bucketing.hpp"
#include "models/profile.hpp"
#include "models/registry.hpp"
#include "models/runtime.hpp"
#include "models/server_runtime.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace ddlsim::models {

class LogicalGraph;  // models/logical_graph.hpp
struct ShardedPlan;  // models/sharding.hpp
class Collective;    // models/collective.hpp

/// A bucket under the scenario's compressor: what is sent and what it costs to make and undo.
struct BucketCompression {
  double comm_bytes = 0;  // the bytes the gradient collective is called with (pushed, with servers)
  double encode_s = 0;    // on the compute stream, before the bucket is submitted
  double decode_s = 0;    // on the compute stream, once the communication has finished
  double server_decode_s = 0;  // parameter servers: decoding one worker's push of one shard
};

struct TrainingPlan {
  const Profile* profile = nullptr;
  int iterations = 1;
  std::vector<Bucket> buckets;
  bool overlap = true;
  /// Per bucket, under a compressor; empty without one (dense buckets, no cost).
  std::vector<BucketCompression> compression;
  /// Adaptive compression: per candidate ratio, per bucket (Runtime::compression_variant picks).
  std::vector<std::vector<BucketCompression>> compression_variants;
  /// Per iteration, the root of the gradient collective (AR-Topk's selecting worker); empty: 0.
  std::vector<int> roots;
  /// Per iteration, before forward (workload.framework_overhead_s, compute_scale applied).
  double framework_overhead_s = 0;
  /// Bytes per second at which a bucket's gradients are copied into its flat buffer before it is
  /// sent and out of it once it is back (training.bucketing.copy_bandwidth); 0: no copies.
  double copy_bandwidth_Bps = 0;
  /// Sharded data parallelism (training.sharding): what each bucket runs (buckets are then its
  /// collectives, models/sharded_iteration.hpp) and the collectives ALLGATHER and REDUCE_SCATTER run;
  /// null without sharding.
  std::shared_ptr<const ShardedPlan> sharded;
  std::shared_ptr<const Collective> all_gather;
  std::shared_ptr<const Collective> reduce_scatter;
};

/// What a sync model may need beyond its params, known once the scenario is read (SyncModel::bind).
struct SyncBinding {
  int workers = 1;
  int iterations = 1;
  std::uint64_t seed = 0;
  const Profile* profile = nullptr;
  std::string params_path = "/training/sync/params";
  /// A file named in the params -> the path to open (relative to the scenario's folder).
  std::function<std::string(const std::string&)> resolve = [](const std::string& f) { return f; };
};

/// What one worker computes per iteration, fixed when the scenario is loaded (SyncModel::worker_workload).
struct WorkerWorkload {
  Profile profile;            // the profile every worker replays (TrainingPlan::profile)
  std::int64_t samples = 0;   // samples one worker processes per iteration: throughput counts them
  double single_worker_iteration_s = 0;  // one worker alone, without communication: speedup's baseline
  nlohmann::json settings = nlohmann::json::object();  // added to summary.json's "sync_settings"
};

/// What a sync model does, as one value (SyncModel::traits): the loader checks the scenario against
/// it, the run plan picks the engine by it, the engine starts servers and streams by it.
struct SyncTraits {
  /// Runs parameter servers (SyncModel::run_server is then started on each).
  bool uses_servers = false;
  /// Sends gradient buckets through replay_iteration, so a compressor applies to them: all-reduced
  /// with the scenario's collective, or pushed to parameter servers that decode them
  /// (receive_gradient) and answer with dense parameters (bsp, asp, ssp).
  bool compresses_gradients = false;
  /// Submits all-reduces among a subgroup (CommRequest::group), which the scenario's collective must
  /// then run without parameter servers.
  bool uses_subgroup_collectives = false;
  /// All-reduces with the scenario's collective (false: servers or gossip).
  bool uses_collective = true;
  /// Every iteration all-reduces the gradient buckets as backward makes them ready (replay_iteration
  /// with ALLREDUCE), so a framework's launch rule (Horovod's cycles) applies.
  bool allreduces_in_backward = false;
  /// run_worker's calls on the Runtime do not depend on runtime.rank(), so workers of the same speed
  /// act alike and the fiber lane may simulate one of them for all (engine/worker_classes.hpp).
  bool rank_symmetric = false;
  /// Iterations are synchronous across workers (throughput = N * batch / t).
  bool synchronous = true;
};

class SyncModel {
 public:
  virtual ~SyncModel() = default;
  /// The worker loop of one rank for `plan.iterations` iterations, on any engine. A model that
  /// exchanges point to point implements run_peer_worker instead (its run_worker refuses).
  virtual void run_worker(Runtime& runtime, const TrainingPlan& plan) const;
  /// The worker loop of a model that also exchanges point to point with its peers (gossip,
  /// event-triggered): only an engine that has a PeerComm calls it. By default run_worker.
  virtual void run_peer_worker(Runtime& runtime, PeerComm& /*peers*/, const TrainingPlan& plan) const {
    run_worker(runtime, plan);
  }
  /// What the model does, as one value (SyncTraits): asked by the loader, the run plan and the engine.
  [[nodiscard]] virtual SyncTraits traits() const { return {}; }
  /// The server loop; returns after serving every push (see expected_pushes).
  virtual void run_server(ServerRuntime&, const TrainingPlan&) const {}
  /// The logical communication graph of a decentralised model for `workers` ranks (nullptr:
  /// none). Throws ConfigError for a graph these workers cannot form (called at load time).
  [[nodiscard]] virtual std::shared_ptr<const LogicalGraph> logical_graph(int /*workers*/, std::uint64_t /*seed*/) const {
    return nullptr;
  }
  /// The model's settings with defaults filled in, for summary.json ("sync_settings").
  [[nodiscard]] virtual nlohmann::json settings() const { return nlohmann::json::object(); }
  /// Load time, once: reads what the params name (training traces) and checks it against the
  /// scenario. Throws ConfigError at a path under binding.params_path.
  virtual void bind(const SyncBinding& /*binding*/) {}
  /// Decisions computed from the co-simulated training before the run ("decisions": "live" where
  /// they do not depend on time: selective_sync), one per iteration; other models never get them.
  virtual void set_live_decisions(const std::vector<char>& /*per_iteration*/) {}
  /// Event-driven models (communication decided per iteration by training numerics): what one
  /// event is, for outputs ("tensor put to one neighbour", ...); empty for the others.
  [[nodiscard]] virtual std::string events_unit() const { return {}; }
  /// Where the event decisions come from (source, trace, recorded accuracy), for summary.json.
  [[nodiscard]] virtual nlohmann::json decisions() const { return nullptr; }
  /// Pushes worker `worker` makes to each server over the run (servers post that many receives).
  [[nodiscard]] virtual std::int64_t pushes_per_worker(const TrainingPlan& plan, int /*worker*/) const {
    return static_cast<std::int64_t>(plan.iterations) * static_cast<std::int64_t>(plan.buckets.size());
  }
  /// What one worker computes per iteration for the workload's `profile` at its `batch` per worker
  /// (`extrapolate`: the scenario allows linear per-sample scaling beyond the measured batches;
  /// Profile::at_batch). Called at load time; throws ConfigError for a workload the model cannot
  /// run. Default: the profile itself, `batch` samples, profile.iteration_compute_s().
  [[nodiscard]] virtual WorkerWorkload worker_workload(const Profile& profile, std::int64_t batch, bool extrapolate) const;
};

using SyncModelRegistry = Registry<SyncModel>;

/// Pushes one server receives over a run: one per worker, iteration and bucket.
std::int64_t expected_pushes(const ServerRuntime& srv, const TrainingPlan& plan);

/// The next gradient push, decoded on the server's compute when the workers compress (one
/// shard's decode per push: servers sum the decoded gradients).
Push receive_gradient(ServerRuntime& srv, const TrainingPlan& plan);

/// Control traffic of the event-driven models: one fp32 scalar (a gradient norm, a flag) from
/// each worker to every server, answered with one scalar; its bucket index is CONTROL_BUCKET.
constexpr double CONTROL_BYTES = 4;
constexpr int CONTROL_BUCKET = -1;
/// Worker: sends one control scalar to every server and waits for every answer.
void exchange_control(Runtime& rt);
/// Server: the control scalars of all workers (one each); throws std::logic_error on a gradient push.
std::vector<Push> receive_control(ServerRuntime& srv);
/// Server: answers each control push with one scalar.
void answer_control(ServerRuntime& srv, const std::vector<Push>& controls, std::int64_t version);

/// What a pull sends back: the server's shard of a bucket's parameters, dense.
double shard_bytes(const ServerRuntime& srv, const TrainingPlan& plan, int bucket);

/// The start of every iteration of every sync model, in this order: the profile's unattributed time
/// and the plan's framework overhead (Phase::FRAMEWORK), I/O, then the forward layers in order.
void replay_forward(Runtime& rt, const TrainingPlan& plan);
/// replay_forward without the forward layers: the unattributed time, the framework overhead, I/O.
void replay_preamble(Runtime& rt, const TrainingPlan& plan);

/// Seconds to copy bucket `b`'s dense bytes once at plan.copy_bandwidth_Bps (0 without copies).
double bucket_copy_s(const TrainingPlan& plan, std::size_t b);

/// Trace replay of one iteration (DESIGN.md section 5): replay_forward, backward layers in reverse;
/// each bucket is copied into its flat buffer and submitted as `kind` when its last layer's
/// backward finishes (or all after backward without overlap); then wait for the communication
/// stream, copy every bucket back out, then the optimizer if `optimizer`.
void replay_iteration(Runtime& rt, const TrainingPlan& plan, CommRequest::Kind kind, bool optimizer, int iteration = 0);

/// The worker loop of the parameter-server models without a barrier (asp, ssp): replay every
/// iteration, pushing each bucket and pulling it back, no optimizer step of their own.
void run_push_pull_worker(Runtime& rt, const TrainingPlan& plan);

/// The compute of one iteration with no communication: replay_forward, backward, then the
/// optimizer step if `optimizer` (local SGD between averagings, gossip before its exchange).
void replay_compute(Runtime& rt, const TrainingPlan& plan, bool optimizer);

/// Submits every bucket of the plan as `kind`, each copied into its flat buffer first unless
/// `kind` is PULL (model averaging in the gradient buckets' fused buffers: parameter bytes equal
/// gradient bytes in the profile's dtype).
void submit_buckets(Runtime& rt, const TrainingPlan& plan, CommRequest::Kind kind);
/// Waits for the communication stream, then copies every bucket back out of its flat buffer.
void wait_buckets(Runtime& rt, const TrainingPlan& plan);

}  // namespace ddlsim::models
