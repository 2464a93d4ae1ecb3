// ddlsim: the SyncModel interface and the Runtime facades it is written against.
//
// A sync model is written like the algorithm in its paper: a worker loop and,
// where it has one, a server loop, calling the Runtime. sim/ implements the
// facades on SimGrid; unit tests can implement them with small fakes. Models
// never read a clock or call SimGrid directly.
//
// Worker side: compute() spends time; submit() queues a communication on the
// worker's one communication stream (FIFO, runs concurrently with compute);
// wait_comm() blocks until everything submitted has finished.
// Server side: receive_push() takes the next gradient push from any worker;
// send_pull() answers one worker with fresh parameters.
#pragma once

#include "models/bucketing.hpp"
#include "models/profile.hpp"
#include "models/registry.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ddlsim::models {

/// What a stretch of compute time is, for the recorder and the timeline.
enum class Phase { IO, FORWARD, BACKWARD, OPTIMIZER, UPDATE };
std::string to_string(Phase phase);

struct CommRequest {
  enum class Kind {
    ALLREDUCE,  // all-reduce `bytes` among all workers with the scenario's collective
    PUSH_PULL,  // push bytes/S to each of the S servers, then pull bytes/S back from each
  };
  Kind kind = Kind::ALLREDUCE;
  int bucket = 0;
  double bytes = 0;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int workers() const = 0;
  [[nodiscard]] virtual int servers() const = 0;
  /// Simulated time in seconds.
  [[nodiscard]] virtual double now() = 0;
  /// Spends `seconds` of this worker's compute (stragglers and noise are applied by the runtime).
  virtual void compute(double seconds, Phase phase, const std::string& label) = 0;
  /// Queues a communication on this worker's communication stream.
  virtual void submit(const CommRequest& request) = 0;
  /// Blocks until every submitted communication has finished.
  virtual void wait_comm() = 0;
  virtual void iteration_begin(int iteration) = 0;
  virtual void iteration_end(int iteration) = 0;
};

struct Push {
  int worker = 0;
  int bucket = 0;
  double bytes = 0;               // bytes received by this server
  std::int64_t seen_version = 0;  // the version of this shard the worker last pulled
};

class ServerRuntime {
 public:
  virtual ~ServerRuntime() = default;
  [[nodiscard]] virtual int server() const = 0;
  [[nodiscard]] virtual int servers() const = 0;
  [[nodiscard]] virtual int workers() const = 0;
  [[nodiscard]] virtual double now() = 0;
  virtual void compute(double seconds, const std::string& label) = 0;
  /// The next push from any worker (blocks).
  virtual Push receive_push() = 0;
  /// Answers `worker` with `bytes` of parameters at `version`.
  virtual void send_pull(int worker, int bucket, double bytes, std::int64_t version) = 0;
  /// Records the staleness of one applied gradient (updates applied since the worker's pull).
  virtual void record_staleness(std::int64_t staleness) = 0;
};

struct TrainingPlan {
  const Profile* profile = nullptr;
  int iterations = 1;
  std::vector<Bucket> buckets;
  bool overlap = true;
};

class SyncModel {
 public:
  virtual ~SyncModel() = default;
  /// The worker loop of one rank for `plan.iterations` iterations.
  virtual void run_worker(Runtime& runtime, const TrainingPlan& plan) const = 0;
  /// True if this model runs parameter servers (run_server is then started on each).
  [[nodiscard]] virtual bool uses_servers() const { return false; }
  /// The server loop; returns after serving every push (see expected_pushes).
  virtual void run_server(ServerRuntime&, const TrainingPlan&) const {}
  /// True if iterations are synchronous across workers (throughput = N * batch / t).
  [[nodiscard]] virtual bool synchronous() const { return true; }
};

using SyncModelRegistry = Registry<SyncModel>;

/// Pushes one server receives over a run: one per worker, iteration and bucket.
std::int64_t expected_pushes(const ServerRuntime& srv, const TrainingPlan& plan);

/// Trace replay of one iteration (DESIGN.md section 5): I/O, forward layers in
/// order, backward layers in reverse; each bucket is submitted as `kind` when
/// its last layer's backward finishes (or all after backward without overlap);
/// then wait for the communication stream, then the optimizer if `optimizer`.
void replay_iteration(Runtime& rt, const TrainingPlan& plan, CommRequest::Kind kind, bool optimizer);

}  // namespace ddlsim::models
