// ddlsim: the SyncModel interface and the Runtime facade it is written against.
//
// A sync model is written like the algorithm in its paper: a worker loop (and,
// where it has one, a server loop) calling the Runtime. sim/ implements the
// Runtime on SimGrid; tests can implement it with a small deterministic fake.
// Models never read a clock or call SimGrid directly.
#pragma once

#include "models/profile.hpp"
#include "models/registry.hpp"

#include <cstdint>
#include <random>
#include <string>

namespace ddlsim::models {

/// What a stretch of compute time is, for the recorder and the timeline.
enum class Phase { IO, FORWARD, BACKWARD, OPTIMIZER };
std::string to_string(Phase phase);

class Runtime {
 public:
  virtual ~Runtime() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int workers() const = 0;
  /// Simulated time in seconds.
  [[nodiscard]] virtual double now() const = 0;
  /// Spends `seconds` of compute on this worker.
  virtual void compute(double seconds, Phase phase, const std::string& label) = 0;
  /// All-reduce `bytes` across all workers with the scenario's collective; blocks this worker until done.
  virtual void allreduce(double bytes, const std::string& label) = 0;
  /// Marks iteration boundaries (for per-iteration metrics).
  virtual void iteration_begin(int iteration) = 0;
  virtual void iteration_end(int iteration) = 0;
  /// This worker's seeded random stream.
  virtual std::mt19937_64& rng() = 0;
};

struct TrainingPlan {
  const Profile* profile = nullptr;
  int iterations = 1;
};

class SyncModel {
 public:
  virtual ~SyncModel() = default;
  /// The worker loop of one rank for `plan.iterations` iterations.
  virtual void run_worker(Runtime& runtime, const TrainingPlan& plan) const = 0;
};

using SyncModelRegistry = Registry<SyncModel>;

}  // namespace ddlsim::models
