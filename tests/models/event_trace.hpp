// Test helper: one small hand-written training trace (models/training_trace.hpp), shared by
// training_trace_test.cpp and sync/event_triggered_test.cpp: 2 workers, 2 tensors (100 and 10 fp32),
// 3 iterations under a constant threshold 0.5 with two initial passes (trigger_rules_test.cpp
// derives its decisions).
#pragma once

#include <nlohmann/json.hpp>

namespace ddlsim::test {

inline nlohmann::json event_trace() {
  return {{"format", "ddlsim-training-trace"}, {"version", 1}, {"model", "tiny"}, {"workers", 2}, {"iterations", 3},
          {"batch_size", 8}, {"dtype_bytes", 4},
          {"algorithm", {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0.5}, {"initial_comm_passes", 2}}},
          {"tensors", {{{"name", "fc.weight"}, {"shape", {10, 10}}, {"numel", 100}}, {{"name", "fc.bias"}, {"numel", 10}}}},
          {"param_norm", {{{1.0, 0.1}, {1.0, 0.1}}, {{1.7, 0.1}, {1.2, 0.1}}, {{1.8, 0.9}, {1.6, 0.1}}}},
          {"grad_norm", {{{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}}},
          {"sent", {{{1, 1}, {1, 1}}, {{1, 0}, {0, 0}}, {{0, 1}, {1, 0}}}},
          {"epochs", {{{"epoch", 1}, {"last_iteration", 2}, {"train_loss", 0.5}, {"train_accuracy", 0.8},
                       {"test_loss", 0.6}, {"test_accuracy", 0.75}}}},
          {"provenance", {{"tool", "hand-written"}}}};
}

}  // namespace ddlsim::test
