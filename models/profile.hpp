// ddlsim: a single-node training profile (the input of trace replay).
//
// Per layer: forward and backward compute seconds, parameter count and
// gradient bytes; per iteration: optimizer, I/O and unattributed seconds (the
// measured iteration's time that no layer's hooks captured). Loaded from a
// profile JSON file (docs/profiles.md) or generated from a uniform synthetic
// description (workload.synthetic in a scenario). Both are validated with
// JSON-path errors. A multi-batch profile ("batch_profiles") holds the times
// measured at several batches; at_batch() gives the profile at any batch
// between them (linear interpolation of every time).
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

/// The times measured at one batch of a multi-batch profile; per layer in the profile's layer order.
struct BatchTimes {
  std::int64_t batch_size = 0;
  double io_s = 0;
  double optimizer_s = 0;
  double unattributed_s = 0;
  std::vector<double> forward_s;
  std::vector<double> backward_s;
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
  /// Per iteration: the measured iteration's time outside every layer, the optimizer and I/O
  /// (framework bookkeeping, Python, allocator); replayed before forward (docs/profiles.md).
  double unattributed_s = 0;
  /// A multi-batch profile's measured batches in increasing order, the top-level one included;
  /// empty for a profile measured at one batch. Copied unchanged by at_batch and scale_batch.
  std::vector<BatchTimes> measured_batches;

  [[nodiscard]] double forward_s() const;
  [[nodiscard]] double backward_s() const;
  [[nodiscard]] double grad_bytes() const;
  [[nodiscard]] std::int64_t parameters() const;
  /// One single-worker iteration: unattributed + io + forward + backward + optimizer.
  [[nodiscard]] double iteration_compute_s() const;

  /// True for a multi-batch profile (times measured at two or more batches).
  [[nodiscard]] bool has_batches() const { return !measured_batches.empty(); }
  /// True if at_batch(batch) needs no extrapolation: a measured batch, or one between two.
  [[nodiscard]] bool covers(std::int64_t batch) const;
  /// The profile at `batch` samples per worker and iteration:
  ///  - a measured batch: its times exactly;
  ///  - between two measured batches b0 < batch < b1: every time (each layer's forward_s and
  ///    backward_s, io_s, optimizer_s) interpolated linearly, t0 + (t1 - t0) (batch - b0) / (b1 - b0);
  ///  - outside the measured batches (for a single-batch profile: any other batch): only with
  ///    `extrapolate`, scale_batch from the nearest measured batch (forward, backward and I/O
  ///    per sample; optimizer unchanged); otherwise a ConfigError at `path` saying so.
  /// Parameters and gradient bytes do not depend on the batch.
  [[nodiscard]] Profile at_batch(std::int64_t batch, bool extrapolate = false, const std::string& path = "") const;
};

/// The most layers a profile (file or synthetic) may have (docs/reliability.md, "Ranges").
inline constexpr std::int64_t MAX_LAYERS = 1'000'000;
/// The most parameters of a layer and of a whole model (a size's limit, units::MAX_BYTES; the
/// gradient bytes of the whole model are held to that limit too).
inline constexpr std::int64_t MAX_PARAMETERS = 1'000'000'000'000'000;

/// The "batch_profiles" array of a profile (models/profile_batches.cpp): every measured batch other
/// than the top-level one, increasing, with `p`'s layers; errors at `path`. Each entry states
/// "unattributed_s" exactly when the top level does (`unattributed_given`).
std::vector<BatchTimes> parse_batch_profiles(const json& value, const std::string& path, const Profile& p,
                                             const std::string& layers_path, bool unattributed_given);

/// Reads a profile object (the content of a profile file, with its "batch_profiles" if any);
/// `path` prefixes error paths.
Profile parse_profile(const json& value, const std::string& path);
/// Reads a profile file. Errors: ConfigError at `ref_path` for a missing/unreadable file,
/// "<file>:<line>:<column>: ..." for malformed JSON, and "<file>: /layers/3/forward_s: ..." for content.
Profile load_profile_file(const std::string& file, const std::string& ref_path);
/// The profile at another batch per worker, compute scaled linearly: forward,
/// backward and I/O times x batch / profile.batch_size; the optimizer step, the
/// unattributed time and the gradient bytes do not depend on the batch.
Profile scale_batch(const Profile& profile, std::int64_t batch);
/// The profile with every compute time multiplied by `scale` (workload.compute_scale): each layer's
/// forward_s and backward_s, optimizer_s, io_s, unattributed_s, at every measured batch; bytes stay.
Profile scale_compute(const Profile& profile, double scale);
/// Builds a uniform profile from workload.synthetic (reader positioned on that object).
Profile synthetic_profile(ObjectReader& synthetic);

}  // namespace ddlsim::models
