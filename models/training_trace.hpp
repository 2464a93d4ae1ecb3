// ddlsim: training traces (docs/traces.md): per iteration, worker and parameter tensor, the
// norms and send decisions that real training under an event-driven algorithm produced
// (tools/record_training.py). Loading one validates its shape and re-applies the algorithm's rule
// (models/trigger_rules.hpp) to the recorded norms: a trace whose decisions the rule does not
// reproduce is refused, naming the first iteration, worker and tensor that differ.
#pragma once

#include "models/json_reader.hpp"
#include "models/registry.hpp"
#include "models/trigger_rules.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddlsim::models {

struct TraceTensor {
  std::string name;
  std::int64_t numel = 0;
};

struct TraceEpoch {
  int epoch = 0;
  int last_iteration = 0;
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
};

class TraceRule;

struct TraceAlgorithm {
  std::string name;               // a registered TraceRule: event_triggered | ordered_gradients | selective_sync | none
  EventTriggerSettings trigger;   // event_triggered
  int m = 0;                      // ordered_gradients
  double delta = 0;               // selective_sync
  json settings;                  // as recorded
  std::shared_ptr<const TraceRule> rule;  // the rule `name` registers
};

class TrainingTrace {
 public:
  /// Validates a trace document; errors name the JSON path under `path`.
  static TrainingTrace read(const json& doc, const std::string& path);
  /// Reads and validates `file`, named in a scenario at `ref_path`.
  static TrainingTrace load(const std::string& file, const std::string& ref_path);

  std::string model;
  int workers = 0;
  int iterations = 0;
  std::int64_t batch_size = 0;
  int dtype_bytes = 4;
  TraceAlgorithm algorithm;
  std::vector<TraceTensor> tensors;
  std::vector<TraceEpoch> epochs;
  json provenance;

  [[nodiscard]] int tensor_count() const { return static_cast<int>(tensors.size()); }
  [[nodiscard]] double tensor_bytes(int i) const {
    return static_cast<double>(tensors[static_cast<std::size_t>(i)].numel) * dtype_bytes;
  }
  [[nodiscard]] double model_bytes() const;
  [[nodiscard]] double param_norm(int k, int w, int i) const { return param_norm_[index(k, w, i)]; }
  [[nodiscard]] double grad_norm(int k, int w, int i) const { return grad_norm_[index(k, w, i)]; }
  [[nodiscard]] bool sent(int k, int w, int i) const { return sent_[index(k, w, i)] != 0; }
  /// Worker w's total gradient norm at iteration k (trigger_rules.hpp: total_norm).
  [[nodiscard]] double total_grad_norm(int k, int w) const;
  /// The provenance and the accuracy the trace recorded, for summary.json.
  [[nodiscard]] json describe() const;

 private:
  [[nodiscard]] std::size_t index(int k, int w, int i) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(workers) + static_cast<std::size_t>(w)) * tensors.size() +
           static_cast<std::size_t>(i);
  }
  void check_rule(const std::string& path) const;

  std::vector<double> param_norm_, grad_norm_;
  std::vector<char> sent_;
};

/// Where a trace's decision differs from its rule: iteration k, worker w, tensor i, and what the rule
/// gives there.
using TraceMismatch = std::function<void(int k, int w, int i, bool rule)>;

/// A training trace's decision rule (docs/traces.md), named by the trace's "algorithm": built from
/// that object (its "name" and the settings beside it), then re-applied to the recorded norms when
/// the trace is loaded. Each event-driven sync model registers its own in its file
/// (models/sync/event_triggered.cpp, ordered_gradients.cpp, selective_sync.cpp); "none", every
/// gradient averaged, is in models/training_trace.cpp.
class TraceRule {
 public:
  virtual ~TraceRule() = default;
  /// Puts the rule's settings where the sync models read them (TraceAlgorithm::trigger, m, delta).
  virtual void describe(TraceAlgorithm& algorithm) const = 0;
  /// Calls `mismatch` at the first decision of `trace` the rule does not give; throws ConfigError
  /// under `path` for settings the trace's shape rules out.
  virtual void check(const TrainingTrace& trace, const std::string& path, const TraceMismatch& mismatch) const = 0;
};
using TraceRuleRegistry = Registry<TraceRule>;

}  // namespace ddlsim::models
