// ddlsim: the scenario loader. JSON in, validated plain structs out.
//
// Everything is checked before any engine starts: types, units, ranges,
// unknown keys, registry names, profile files and the topology itself (built
// here, so an impossible or disconnected topology fails at validation). Every
// error is a ConfigError naming the JSON path. docs/scenario.md is the
// reference for every field, its unit and its default.
#pragma once

#include "models/collective.hpp"
#include "models/compressor.hpp"
#include "models/json_reader.hpp"
#include "models/profile.hpp"
#include "models/adaptive_compression.hpp"
#include "models/compression_cost.hpp"
#include "models/sharding.hpp"
#include "models/sync_model.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"
#include "scenario/packet_settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::sim {

enum class Fidelity { ANALYTIC, FLOW, PACKET };
enum class NetworkModel { IDEAL, TCP, CALIBRATED };
enum class Granularity { STEPWISE, PIPELINED };
std::string to_string(Fidelity f);
std::string to_string(NetworkModel m);
std::string to_string(Granularity g);

struct RunPlan;  // scenario/run_plan.hpp

struct PlatformSpec {
  std::string topology = "star";
  int workers = 8;
  int parameter_servers = 0;
  platforms::LinkSpec link;
  platforms::Routing routing = platforms::Routing::SHORTEST;  // default: platforms::default_routing(topology)
  platforms::Topology graph;  // built and checked at load time
};

/// A time-varying bandwidth and/or latency applied to links (SimGrid profiles).
struct LinkTrace {
  std::vector<std::string> links;                           // edge names; empty = every link
  std::vector<std::pair<double, double>> bandwidth_Bps;     // (t_s, bandwidth)
  std::vector<std::pair<double, double>> latency_s;         // (t_s, latency)
  double period_s = -1;                                     // repeat period; -1 = no repeat
};
/// The shortest repeat period of a link trace (docs/reliability.md, "Ranges").
inline constexpr double MIN_TRACE_PERIOD_S = 1e-3;
/// Every link of a built platform within a bandwidth's and a latency's ranges (models/units.hpp):
/// derived values (a fat tree's link.bandwidth / oversubscription, say) are checked as given ones.
void check_link_ranges(const platforms::Topology& topo, const std::string& path);
/// Reads "network.link_traces" against the platform's link names (scenario/scenario_link_traces.cpp).
std::vector<LinkTrace> read_link_traces(const json& value, const std::string& path, const platforms::Topology& topo);
/// The traces that set one link's bandwidth and latency (null: none). A later entry that names the
/// link (or every link) replaces an earlier one's series: SimGrid takes one profile per link and
/// property, and analytic fidelity follows the same rule (the one place it is written).
struct LinkTraceOf {
  const LinkTrace* bandwidth = nullptr;
  const LinkTrace* latency = nullptr;
};
LinkTraceOf link_trace_of(const std::vector<LinkTrace>& traces, const std::string& link_name);

/// The calibrated model's factors (network.latency_factor, network.bandwidth_factor; `ddlsim
/// collectives --latency-factor/--bandwidth-factor`): each in [MIN_MODEL_FACTOR, MAX_MODEL_FACTOR],
/// and the bandwidth factor at most 1 (check_bandwidth_factor): the one rule for every command.
inline constexpr double MIN_MODEL_FACTOR = 1e-9;
inline constexpr double MAX_MODEL_FACTOR = 1e9;
/// Throws ConfigError at `path` for a bandwidth factor above 1 (no model may beat the wire).
void check_bandwidth_factor(double factor, const std::string& path);

/// The largest fixed cost per collective call accepted (1 s: real ones are microseconds to milliseconds).
inline constexpr double MAX_CALL_COST_S = 1.0;
/// The most workers (and parameter servers) a platform may have: platform.workers, --workers.
inline constexpr int MAX_WORKERS = 1'000'000;
std::string call_cost_range_message(double call_s);

/// What a calibration was fitted on (its snippet's fit.range): outside it, it extrapolates.
struct CalibrationRange {
  double min_bytes = 0, max_bytes = 0;
  double min_bandwidth_Bps = 0, max_bandwidth_Bps = 0;
  double min_latency_s = 0, max_latency_s = 0;
  int min_ranks = 0, max_ranks = 0;
};

struct NetworkSpec {
  Fidelity fidelity = Fidelity::FLOW;
  NetworkModel model = NetworkModel::IDEAL;
  Granularity granularity = Granularity::STEPWISE;
  double latency_factor = 1.0;    // calibrated model only
  double bandwidth_factor = 1.0;  // calibrated model only
  double collective_call_s = 10e-6;  // fixed launch/handshake cost of every collective call
  /// True when network.collective_call_cost was given: it then overrides a per-call protocol's own
  /// call cost too (software "nccl", models/protocol_choice.hpp).
  bool collective_call_given = false;
  std::string calibration_file;      // network.calibration, resolved; empty without one
  std::optional<CalibrationRange> calibration_range;  // its fit.range (snippets before it have none)
  /// The communication library's software costs (network.software); null: ideal.
  std::shared_ptr<const models::SoftwareCost> software;
  std::vector<LinkTrace> link_traces;
  /// network.push_pull_solver "simgrid": parameter-server traffic on SimGrid's LMM even where the
  /// fluid links share it the same way ("auto", engine/fluid_ps.hpp).
  bool push_pull_simgrid = false;
  /// network.packet: TCP and queues at packet fidelity (scenario/packet_settings.hpp).
  PacketSettings packet;
};

struct WorkloadSpec {
  models::Profile profile;   // at batch_size (measured, interpolated or scaled)
  std::string profile_file;  // empty for a synthetic workload
  int iterations = 10;
  std::int64_t batch_size = 32;  // samples per worker (per learner with crossbow) per iteration
  bool batch_extrapolation = false;  // "batch_scaling": "linear": a batch outside the measured ones scales per sample
  bool batch_scaled = false;         // batch_size is outside the profile's measured batches and was scaled linearly
  double compute_scale = 1;          // every compute time of the profile (and the overhead) multiplied by it
  double framework_overhead_s = 0;   // per iteration, before forward; compute_scale applied
  /// What each worker computes per iteration, from the sync model (SyncModel::worker_workload):
  /// the profile it replays, the samples throughput counts, speedup's one-worker baseline.
  models::WorkerWorkload worker;
};

struct Plugin {
  std::string name;
  json params = json::object();
};

enum class BucketingPolicy { SIZE, MGWFBP, DDP, HOROVOD };
std::string to_string(BucketingPolicy p);

/// "training.bucketing" (scenario/scenario_bucketing.cpp; docs/scenario.md).
struct BucketingSpec {
  BucketingPolicy policy = BucketingPolicy::SIZE;
  double bucket_bytes = 25e6;  // SIZE: the cap (0 = one bucket per layer); DDP: bucket_cap_mb (25 MiB)
  double first_bucket_bytes = 1048576;          // DDP: the first bucket's cap
  double fusion_threshold_bytes = 134217728;    // HOROVOD: HOROVOD_FUSION_THRESHOLD (128 MiB)
  double cycle_s = 1e-3;                        // HOROVOD: HOROVOD_CYCLE_TIME (1 ms)
  int max_inflight = 1;  // collectives in flight at once on a worker's communication stream
  bool overlap = true;
  double copy_bandwidth_Bps = 0;  // a bucket's flatten/unflatten copies (B/s); 0 = no copies
};
/// Reads "training.bucketing"; `b` is finished by the caller.
BucketingSpec read_bucketing(ObjectReader& b);
/// The bucketing settings as summary.json reports them.
json bucketing_settings(const BucketingSpec& b);

enum class NoiseDistribution { NONE, NORMAL, LOGNORMAL, EXPONENTIAL };

struct StragglerSpec {
  std::vector<double> speed_factors;  // per rank compute-time multiplier (size = workers)
  NoiseDistribution distribution = NoiseDistribution::NONE;
  double sigma = 0;
  /// The noise's own seed ("training.stragglers.seed"); absent: the scenario's seed. Another noise
  /// seed draws other noise over the same data order, shards and routes.
  std::optional<std::uint64_t> seed;
  /// The compute-time multiplier of `rank` for one iteration, drawn from `rng`.
  template <class Rng>
  double factor(int rank, Rng& rng) const;
};

/// Encode/decode costs of the scenario's compressor ("training.compression_cost").
struct CompressionCostSpec {
  bool given = false;
  std::string table_file;  // a cost table (resolved path), or empty for coefficients given inline
  std::string device;      // the table's device, or "given in the scenario"
  models::CompressorCost cost;
};

/// Adaptive compression ratio ("training.adaptive_compression", seed 002's optimisation).
struct AdaptiveCompressionSpec {
  bool enabled = false;
  models::AdaptiveSettings settings;
  std::shared_ptr<const models::GainModel> gain;  // null with live_gain
  std::string gain_file;  // resolved path, or empty when given inline
  /// "gain_model": "live": measured on the co-simulated training's gradients (training.convergence).
  bool live_gain = false;
  /// The scenario's compressor at each candidate ratio (settings.candidates order).
  std::vector<std::shared_ptr<const models::Compressor>> candidates;
};

/// "training.convergence": scenario/convergence_spec.hpp.
struct ConvergenceSpec;

/// "training.sharding" (scenario/scenario_sharding.cpp; docs/scenario.md, "Sharded data parallelism").
struct ShardingSpec {
  models::ShardingStrategy strategy = models::ShardingStrategy::NONE;
  std::string name = "none";
  int units = 0;  // per-unit strategies: the profile's layers cut into this many units
  int shard_ranks = 0;  // fsdp_hybrid_shard: the shard group's size (a divisor of the workers)
  models::BackwardPrefetch backward_prefetch = models::BackwardPrefetch::PRE;
  models::StateBytes bytes_per_parameter;
  double device_memory_bytes = 0;  // 0: not checked
  [[nodiscard]] bool enabled() const { return strategy != models::ShardingStrategy::NONE; }
};

struct TrainingSpec {
  Plugin sync{"bsp"};
  Plugin collective{"ring"};
  Plugin compressor{"none"};
  BucketingSpec bucketing;
  ShardingSpec sharding;
  StragglerSpec stragglers;
  std::shared_ptr<const models::SyncModel> sync_model;
  std::shared_ptr<const models::LogicalGraph> graph;  // the sync model's logical graph (decentralised models)
  std::shared_ptr<const models::Collective> collective_algorithm;
  std::shared_ptr<const models::Compressor> compressor_model;
  CompressionCostSpec compression_cost;
  AdaptiveCompressionSpec adaptive;
  std::shared_ptr<const ConvergenceSpec> convergence;  // null: no co-simulation
};

struct OutputSpec {
  std::string dir;  // default "out/<name>"
  bool iterations_csv = true;   // iterations.csv (streamed as the run goes)
  bool timeline = true;
  int timeline_workers = 8;     // ranks 0..k-1 appear in timeline.json
  int timeline_iterations = 3;  // iterations 0..k-1 appear in timeline.json
};

struct Scenario {
  std::string name = "scenario";
  std::string description;
  std::uint64_t seed = 1;
  PlatformSpec platform;
  NetworkSpec network;
  WorkloadSpec workload;
  TrainingSpec training;
  OutputSpec output;
  json document;  // the scenario as given, after --set overrides
  /// What every later layer runs by, decided once when the scenario is loaded (scenario/run_plan.hpp:
  /// the engine, the classes of workers, the buckets and their compression, the collective group
  /// and what "auto" picks per bucket, the analytic network's alpha and beta).
  std::shared_ptr<const RunPlan> plan;
};

template <class Rng>
double StragglerSpec::factor(int rank, Rng& rng) const {
  double f = speed_factors.empty() ? 1.0 : speed_factors[static_cast<std::size_t>(rank)];
  switch (distribution) {
    case NoiseDistribution::NONE: break;
    case NoiseDistribution::NORMAL: f *= std::max(0.0, 1.0 + sigma * std::normal_distribution<double>(0, 1)(rng)); break;
    case NoiseDistribution::LOGNORMAL:
      f *= std::exp(sigma * std::normal_distribution<double>(0, 1)(rng) - sigma * sigma / 2);
      break;
    case NoiseDistribution::EXPONENTIAL:
      if (sigma > 0) f *= 1.0 + std::exponential_distribution<double>(1.0 / sigma)(rng);
      break;
  }
  return f;
}

/// Applies one "--set path=value" override to `doc` (scenario/scenario_override.cpp). `path` is dotted
/// (platform.link.bandwidth) or a JSON pointer (/platform/link/bandwidth); `value` is parsed as
/// JSON (with the limits of models/json_input.hpp), and taken as a string if it is not valid JSON.
void apply_override(json& doc, const std::string& assignment);

/// Refuses a hierarchical topology whose gpus_per_node (`given` in its params, else the default)
/// does not divide the workers, at `path` (/platform/params/gpus_per_node, or --topology-params).
void check_gpus_per_node(const platforms::Topology& topology, int workers, bool given, const std::string& path);

/// Refuses settings the engine would ignore together (scenario/scenario_checks.cpp): a collective
/// with a parameter-server sync model (`collective_given`: the scenario names one), idle
/// parameter servers, MG-WFBP with parameter servers, tcp at analytic fidelity.
void check_combination(const Scenario& s, bool collective_given);
/// Reads "training.sharding" for scenario `s` (its platform and profile read); `r` is finished by the
/// caller (scenario/scenario_sharding.cpp).
ShardingSpec read_sharding(ObjectReader& r, const Scenario& s);
/// Refuses sharding with what it does not compose with, and a state over device_memory (called by
/// check_combination).
void check_sharding_combination(const Scenario& s, bool collective_given);
/// The sharding as summary.json reports it: the strategy, its settings and the memory per rank.
json sharding_settings(const Scenario& s);
/// Under sharding, replaces `training`'s buckets by the sharded iteration's collectives and sets
/// its sharded plan, all-gather and reduce-scatter (models/sharded_iteration.hpp); else nothing.
void plan_sharding(const Scenario& s, models::TrainingPlan& training);

/// Refuses a bucketing the sync model, collective, compressor or fidelity cannot honour
/// (scenario/scenario_bucketing.cpp; called by check_combination).
void check_bucketing(const Scenario& s);
/// Checks the shape of the "sweep" section (absent: nullptr), which `run` and `validate` ignore:
/// an object of override paths to non-empty arrays of distinct values (scenario/scenario_sweep.cpp).
void check_sweep_section(const json* sweep);

/// A file named in a scenario: relative to the scenario's folder when it exists there, else as given.
std::string resolve_beside(const std::string& file, const std::string& base_dir);
/// network.calibration (scenario/scenario_calibration.cpp): the scenario's network object with the
/// calibration snippet's settings merged in (unchanged without one), the file, and the merged keys.
struct CalibratedNetwork {
  json network;
  std::string file;
  std::set<std::string> keys;
  std::optional<CalibrationRange> range;
};
CalibratedNetwork apply_calibration(const json* network, const std::string& base_dir);
/// An error in a merged value, re-addressed to /network/calibration with the path inside the file.
ConfigError calibration_error(const ConfigError& e, const CalibratedNetwork& calibration);

/// Reads "compute_scale" and "framework_overhead_s" of the workload section and scales the
/// profile's compute times and the overhead (scenario/scenario_compute.cpp).
void read_compute_costs(ObjectReader& workload, Scenario& s);

/// Reads "compression_cost" of the training section (scenario/scenario_compression.cpp).
void read_compression_cost(ObjectReader& training, Scenario& s, const std::string& base_dir);
/// Reads "adaptive_compression" of the training section (scenario/scenario_compression.cpp).
void read_adaptive_compression(ObjectReader& training, Scenario& s, const std::string& base_dir);
/// Checks the compressor against the sync model, the collective and its costs; under a
/// gathering compressor "auto" becomes the all-gather (scenario/scenario_compression.cpp).
void check_compression(Scenario& s);

/// Validates a scenario document. `base_dir` resolves relative profile paths.
Scenario parse_scenario(const json& doc, const std::string& base_dir);

/// read_json_file + apply_override for each + parse_scenario.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides);

}  // namespace ddlsim::sim
