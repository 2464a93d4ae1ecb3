// ddlsim: compression gain as a function of the compression ratio and of training progress.
//
// Seed 002 (Tyagi & Swany, IEEE BigData 2023) measures a compressor's statistical
// efficiency as its compression gain, E[||g_c||^2] / E[||g_e||^2], where g_e is the
// gradient plus the error-feedback residual and g_c = C(g_e) what is sent. A timing
// simulator cannot compute gradients, so the gain comes from a gain model fitted on real
// training (tools/measure_gain.py): at checkpoints of a real run (optimizer steps), the
// gain measured at several ratios c and a power-law curve fitted through them,
//     gain(c) = min(1, a * c^b)   (least squares on log gain against log c).
// Between checkpoints the gains are interpolated linearly in the step; before the first
// and after the last they are held. Simulated iteration i reads step i.
// File (scenarios/compression_gain/*.json; docs/compression.md):
//   {"source": "...", "model": "...", "method": "...",
//    "checkpoints": [{"step": 0, "a": 1.3, "b": 0.4, "measured": [[0.1, 0.52], ...]}, ...]}
#pragma once

#include "models/json_reader.hpp"

#include <string>
#include <vector>

namespace ddlsim::models {

class GainModel {
 public:
  struct Checkpoint {
    double step = 0;
    double a = 1;  // gain(c) = min(1, a * c^b)
    double b = 0;
    std::vector<std::pair<double, double>> measured;  // (ratio, gain) the curve was fitted on
  };

  /// Validates a gain-model document; errors are ConfigErrors at JSON paths under `path`.
  static GainModel read(const json& doc, const std::string& path);
  /// Reads a file named at `ref_path` of a scenario (errors name `ref_path` and the file).
  static GainModel load(const std::string& file, const std::string& ref_path);

  /// The gain of ratio `ratio` (kept fraction, (0, 1]) at optimizer step `step`.
  [[nodiscard]] double gain(double ratio, double step) const;
  [[nodiscard]] const std::vector<Checkpoint>& checkpoints() const { return checkpoints_; }
  std::string source;  // where the measurements come from
  std::string model;   // what was trained

 private:
  std::vector<Checkpoint> checkpoints_;  // ascending steps
};

}  // namespace ddlsim::models
