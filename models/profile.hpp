// ddlsim: a single-node training profile (the input of trace replay).
//
// Per layer: forward and backward compute seconds, parameter count and
// gradient bytes; per iteration: optimizer and I/O seconds. Loaded from a
// profile JSON file (docs/profiles.md) or generated from a uniform synthetic
// description (workload.synthetic in a scenario). Both are validated with
// JSON-path errors.
#pragma once

#include "models/json_reader.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::models {

struct Layer {
  std::string name;
  double forward_s = 0;
  double backward_s = 0;
  std::int64_t parameters = 0;
  double grad_bytes = 0;
};

struct Profile {
  std::string model;
  std::int64_t batch_size = 32;   // samples per worker per iteration
  std::string device;
  std::string dtype = "fp32";
  std::string provenance;
  std::vector<Layer> layers;
  double optimizer_s = 0;
  double io_s = 0;

  [[nodiscard]] double forward_s() const;
  [[nodiscard]] double backward_s() const;
  [[nodiscard]] double grad_bytes() const;
  [[nodiscard]] std::int64_t parameters() const;
  /// One single-worker iteration: io + forward + backward + optimizer.
  [[nodiscard]] double iteration_compute_s() const;
};

/// Reads a profile object (the content of a profile file); `path` prefixes error paths.
Profile parse_profile(const json& value, const std::string& path);
/// Reads a profile file. Errors: ConfigError at `ref_path` for a missing/unreadable file,
/// "<file>:<line>:<column>: ..." for malformed JSON, and "<file>: /layers/3/forward_s: ..." for content.
Profile load_profile_file(const std::string& file, const std::string& ref_path);
/// The profile at another batch per worker, compute scaled linearly: forward,
/// backward and I/O times x batch / profile.batch_size; the optimizer step and
/// the gradient bytes do not depend on the batch.
Profile scale_batch(const Profile& profile, std::int64_t batch);
/// Builds a uniform profile from workload.synthetic (reader positioned on that object).
Profile synthetic_profile(ObjectReader& synthetic);

}  // namespace ddlsim::models
