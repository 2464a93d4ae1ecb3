// ddlsim: a run's per-iteration records, and what they add up to.
//
// An iteration is complete once every worker has ended it (engine/records.cpp): its records are
// then handed to a RecordSink (the CLI streams them to iterations.csv, analysis/run_outputs.cpp)
// and folded into IterationTotals, which is all summary.json needs. So a run keeps a constant
// amount of per-iteration state however many iterations it runs (docs/reliability.md, "Soak").
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
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

/// One timeline event (Chrome trace "complete" event).
struct TraceEvent {
  int pid = 0;          // worker rank, or workers + server index
  int tid = 0;          // 0 compute, 1 communication
  std::string name;
  std::string category; // io, forward, backward, optimizer, update, allreduce, push_pull
  double start_s = 0;
  double duration_s = 0;
};

/// Where a run's records go as they are produced.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  /// Iteration `iteration` once every worker has ended it: one record per worker (by rank), its
  /// straggler and staleness waits filled in, and what the iteration's gradients ran.
  virtual void iteration(int iteration, const std::vector<IterationRecord>& workers,
                         const IterationCompression& compression) = 0;
  /// The same when workers were simulated once per class (engine/worker_classes.hpp): worker w's
  /// record is records[slot_of[w]]. By default, the records of every worker are made and passed
  /// to iteration().
  virtual void iteration_by_class(int iteration, const std::vector<IterationRecord>& records,
                                  const std::vector<int>& slot_of, const IterationCompression& compression);
  /// A timeline event (only those output.timeline asks for), in the order they are recorded.
  virtual void trace(const TraceEvent& event) = 0;
};

/// Occurrences of non-negative integers (staleness), by value: exact while at most EXACT_LIMIT
/// distinct values occurred. Past that (a staleness that grows with the run: an event-triggered
/// tensor never sent again), every value of at least EXACT_BELOW falls into the bin of the values
/// sharing its BIN_BITS most significant bits (relative width at most 2^(1 - BIN_BITS)), keyed by
/// the bin's smallest value: at most EXACT_BELOW + 2^(BIN_BITS - 1) keys per power of two, so a run
/// of 10^6 iterations keeps no more than one of 10^4 (docs/reliability.md, "Soak"). `sum` and
/// `max` stay exact.
struct Histogram {
  static constexpr std::size_t EXACT_LIMIT = 4096;
  static constexpr std::int64_t EXACT_BELOW = 1024;
  static constexpr int BIN_BITS = 8;
  std::map<std::int64_t, std::int64_t> counts;  // value (binned: the bin's smallest) -> occurrences
  std::int64_t total = 0;
  double sum = 0;
  std::int64_t max = 0;
  bool binned = false;
  void add(std::int64_t value) {
    ++counts[binned ? bin_of(value) : value];
    ++total;
    sum += static_cast<double>(value);
    max = total == 1 ? value : std::max(max, value);
    if (!binned && counts.size() > EXACT_LIMIT) fold();
  }
  /// The key of `value`'s bin once binned.
  [[nodiscard]] static std::int64_t bin_of(std::int64_t value);
  /// The q-quantile by linear interpolation between closest ranks (numpy's default); 0 when empty.
  [[nodiscard]] double quantile(double q) const;

 private:
  void fold();  // from exact counts to bins
};

/// Quantiles of a stream of non-negative values (iteration times): exact while it holds at most
/// EXACT_LIMIT values; beyond, each value falls into a logarithmic bin of relative width
/// BIN_WIDTH, and a quantile is its bin's geometric middle (within BIN_WIDTH / 2 of the exact one).
class Quantiles {
 public:
  static constexpr std::size_t EXACT_LIMIT = 65536;
  static constexpr double BIN_WIDTH = 1e-4;
  void add(double value);
  /// add(value) `count` times.
  void add(double value, std::int64_t count);
  /// Linear interpolation between closest ranks (numpy's default); 0 when empty.
  [[nodiscard]] double quantile(double q) const;
  [[nodiscard]] std::int64_t count() const { return count_; }
  [[nodiscard]] bool exact() const { return bins_.empty() && zeros_ == 0; }

 private:
  void bin(double value, std::int64_t count = 1);
  [[nodiscard]] double nth(std::int64_t rank) const;  // the rank-th smallest (binned)

  std::vector<double> exact_;
  std::map<std::int64_t, std::int64_t> bins_;  // log bin -> values in it
  std::int64_t zeros_ = 0;                     // binned values equal to 0
  std::int64_t count_ = 0;
};

/// One worker's sums over its completed iterations.
struct WorkerTotals {
  std::int64_t iterations = 0;
  double duration_s = 0;
  double compute_s = 0;
  double exposed_comm_s = 0;
  double comm_busy_s = 0;
  double straggler_wait_s = 0;
  double staleness_wait_s = 0;
  double codec_s = 0;
  std::int64_t events_sent = 0;      // over the iterations that recorded events
  std::int64_t events_possible = 0;
};

/// The sums summary.json is made of, over the iterations every worker completed.
struct IterationTotals {
  int iterations = 0;  // completed by every worker: the rows per worker in iterations.csv
  std::vector<WorkerTotals> workers;
  Quantiles durations;                     // every worker's iteration times
  /// Global steps: iteration k's step ends when its last worker ends it (the model has then been
  /// updated by every worker's gradient), and lasts from the previous step's end (the first: from
  /// the earliest start). What synchronous models report as their iteration time (docs/outputs.md).
  Quantiles global_steps;
  double global_start_s = 0;  // the first iteration's earliest start
  double global_end_s = 0;    // the last completed iteration's latest end
  std::map<int, int> iterations_per_variant;  // adaptive compression: candidate -> iterations run
  int exploring = 0;                       // iterations adaptive compression spent exploring
  void add(const std::vector<IterationRecord>& records, const IterationCompression& compression);
  /// The same with worker w's record records[slot_of[w]] (RecordSink::iteration_by_class).
  void add(const std::vector<IterationRecord>& records, const std::vector<int>& slot_of,
           const IterationCompression& compression);

 private:
  void add_global_step(const std::vector<IterationRecord>& records);
};

}  // namespace ddlsim::sim
