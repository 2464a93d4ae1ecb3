// ddlsim: where the event-driven sync models (event_triggered, ordered_gradients, selective_sync)
// take their per-iteration decisions from: a recorded training trace (docs/traces.md), replayed
// as recorded, or a seeded surrogate -- a schedule of event probabilities fitted from a trace (or
// given), drawn per iteration, worker and message, so that models and worker counts no trace was
// recorded for can be simulated. A surrogate is a statistical stand-in, not training: its
// decisions have the trace's rates, not its correlations with the numerics.
#pragma once

#include "models/sync_model.hpp"
#include "models/training_trace.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace ddlsim::models {

struct DecisionSource {
  bool live = false;        // computed from the co-simulated training's numerics (training.convergence)
  bool surrogate = false;   // false: replay the trace
  std::string trace_file;   // as given in the params; empty: none
  int windows = 10;         // surrogate: iteration windows its probabilities are fitted over
  std::string path;         // the params object's JSON path
};

/// Reads "decisions" ("trace" or "surrogate", default "trace"; also "live" when `live_allowed`),
/// "trace" (a trace file; required with "trace", and with "surrogate" when `surrogate_needs_trace`;
/// refused with "live") and "windows" (surrogate only, 1 .. 10,000, default 10). Does not call
/// params.finish().
DecisionSource read_decision_source(ObjectReader& params, bool surrogate_needs_trace, bool live_allowed = false);

/// Loads the source's trace (nullptr without one) and checks it was recorded under `algorithm`
/// and, when replayed, with the scenario's worker count and at least its iterations.
std::shared_ptr<const TrainingTrace> load_decision_trace(const DecisionSource& source, const SyncBinding& binding,
                                                         const std::string& algorithm);

/// Replaying a trace: its tensors' bytes must add up to the profile's gradient bytes.
void check_trace_bytes(const TrainingTrace& trace, const SyncBinding& binding, const DecisionSource& source);

/// A uniform draw in [0, 1) from (seed, a, b, c), independent of the order of simulation.
double surrogate_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c);

/// Iteration k's window among `windows` equal windows over iterations [first, last] of a trace
/// (k beyond `last` is held in the last window).
int window_of(int k, int first, int last, int windows);

/// An event_triggered trace's send rates, for the surrogate: every tensor is sent during the trace's
/// initial passes; after them, per window of iterations, the fraction of (iteration, worker) pairs
/// that sent each tensor. The trace's layers (tensor names up to the last '.') are represented by
/// their largest tensor.
struct TensorRates {
  int first = 0;                               // iterations before this always send
  int last = 0;                                // the trace's last iteration
  int windows = 1;                             // as asked (window_of)
  std::vector<std::vector<double>> per_tensor; // [tensor][window]
  std::vector<int> representative;             // per trace layer, in order: its largest tensor
  /// The representative tensor of the trace layer at relative depth `depth` in [0, 1).
  [[nodiscard]] int tensor_at_depth(double depth) const;
  /// Tensor i's send probability at (simulated) iteration k.
  [[nodiscard]] double rate(int tensor, int k) const;
};
TensorRates fit_tensor_rates(const TrainingTrace& trace, const DecisionSource& source);

/// For summary.json: the source, the trace file and what it recorded.
nlohmann::json describe_source(const DecisionSource& source, const TrainingTrace* trace);

}  // namespace ddlsim::models
