// ddlsim: multi-batch profiles (docs/profiles.md, "batch_profiles"): reading the measured batches,
// and the profile at another batch (measured, interpolated, or extrapolated per sample).
#include "models/profile.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::models {
namespace {

constexpr std::int64_t MAX_BATCH = std::numeric_limits<std::int64_t>::max();

double required_time(ObjectReader& r, const std::string& key) {
  (void)r.require(key);
  return r.time_s(key, 0);
}

BatchTimes times_of(const Profile& p) {
  BatchTimes t{p.batch_size, p.io_s, p.optimizer_s, p.unattributed_s, {}, {}};
  for (const auto& l : p.layers) {
    t.forward_s.push_back(l.forward_s);
    t.backward_s.push_back(l.backward_s);
  }
  return t;
}

/// `p` with the times of `t` (same layers).
Profile with_times(const Profile& p, const BatchTimes& t) {
  Profile out = p;
  out.batch_size = t.batch_size;
  out.io_s = t.io_s;
  out.optimizer_s = t.optimizer_s;
  out.unattributed_s = t.unattributed_s;
  for (std::size_t k = 0; k < out.layers.size(); ++k) {
    out.layers[k].forward_s = t.forward_s[k];
    out.layers[k].backward_s = t.backward_s[k];
  }
  return out;
}

std::string batch_list(const std::vector<BatchTimes>& batches) {
  std::vector<std::string> names;
  for (const auto& b : batches) names.push_back(std::to_string(b.batch_size));
  return join_names(names);
}

}  // namespace

std::vector<BatchTimes> parse_batch_profiles(const json& value, const std::string& path, const Profile& p,
                                             const std::string& layers_path, bool unattributed_given) {
  if (!value.is_array() || value.empty())
    throw ConfigError(path, fmt::format("expected a non-empty array of {{\"batch_size\", \"io_s\", \"optimizer_s\", "
                                        "\"layers\"}} objects, got {}",
                                        value.is_array() ? std::string("an empty array") : json_type_name(value)));
  std::vector<BatchTimes> out{times_of(p)};
  for (std::size_t i = 0; i < value.size(); ++i) {
    ObjectReader r(value[i], fmt::format("{}/{}", path, i));
    BatchTimes t;
    t.batch_size = r.required_integer("batch_size", 1, MAX_BATCH);
    if (i > 0 && t.batch_size <= out.back().batch_size)
      throw ConfigError(r.path_of("batch_size"), fmt::format("batch sizes must increase, got {} after {}", t.batch_size,
                                                             out.back().batch_size));
    if (t.batch_size == p.batch_size)
      throw ConfigError(r.path_of("batch_size"),
                        fmt::format("batch {} is the top-level profile's (batch_size); list each other measured "
                                    "batch once",
                                    t.batch_size));
    t.io_s = required_time(r, "io_s");
    t.optimizer_s = required_time(r, "optimizer_s");
    // Every batch states the same times: unattributed_s in all of them or in none.
    if (r.has("unattributed_s") != unattributed_given)
      throw ConfigError(r.path_of("unattributed_s"),
                        unattributed_given ? "missing: the top level gives \"unattributed_s\", so every batch does" +
                                                 r.misspelling_hint("unattributed_s")
                                           : "the top level gives no \"unattributed_s\": give it there too, or in no batch");
    t.unattributed_s = r.time_s("unattributed_s", 0);
    const json& layers = r.require("layers");
    const std::string lp = r.path_of("layers");
    if (!layers.is_array() || layers.size() != p.layers.size())
      throw ConfigError(lp, fmt::format("expected the {} layers of {} in the same order, got {}", p.layers.size(),
                                        layers_path,
                                        layers.is_array() ? fmt::format("an array of {}", layers.size())
                                                          : json_type_name(layers)));
    for (std::size_t k = 0; k < layers.size(); ++k) {
      ObjectReader lr(layers[k], fmt::format("{}/{}", lp, k));
      const std::string name = lr.required_string("name");
      if (name != p.layers[k].name)
        throw ConfigError(lr.path_of("name"),
                          fmt::format("expected \"{}\", the name of {}/{}: every batch lists the same layers in the "
                                      "same order, got \"{}\"",
                                      excerpt(p.layers[k].name), layers_path, k, excerpt(name)));
      t.forward_s.push_back(required_time(lr, "forward_s"));
      t.backward_s.push_back(required_time(lr, "backward_s"));
      lr.finish();
    }
    r.finish();
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BatchTimes& a, const BatchTimes& b) { return a.batch_size < b.batch_size; });
  return out;
}


bool Profile::covers(std::int64_t batch) const {
  if (measured_batches.empty()) return batch == batch_size;
  return batch >= measured_batches.front().batch_size && batch <= measured_batches.back().batch_size;
}

Profile Profile::at_batch(std::int64_t batch, bool extrapolate, const std::string& path) const {
  if (measured_batches.empty()) {
    if (batch == batch_size) return *this;
    if (!extrapolate)
      throw ConfigError(path, fmt::format("the profile was measured with batch {} per worker, not {}; add "
                                          "\"batch_scaling\": \"linear\" to scale forward, backward and I/O times with "
                                          "the batch (the optimizer step and the gradient bytes stay), or profile that batch",
                                          batch_size, batch));
    return scale_batch(*this, batch);
  }
  const auto& m = measured_batches;
  if (!covers(batch)) {
    if (!extrapolate)
      throw ConfigError(path, fmt::format("the profile was measured at batches {} per worker; {} is outside [{}, {}]: add "
                                          "\"batch_scaling\": \"linear\" to scale forward, backward and I/O times per "
                                          "sample from the nearest measured batch (the optimizer step and the gradient "
                                          "bytes stay), or profile that batch",
                                          batch_list(m), batch, m.front().batch_size, m.back().batch_size));
    return scale_batch(with_times(*this, batch < m.front().batch_size ? m.front() : m.back()), batch);
  }
  // The first measured batch >= batch; interpolate from the one before it unless it is exact.
  const auto hi = std::lower_bound(m.begin(), m.end(), batch,
                                   [](const BatchTimes& t, std::int64_t b) { return t.batch_size < b; });
  if (hi->batch_size == batch) return with_times(*this, *hi);
  const auto& b0 = *(hi - 1);
  const auto& b1 = *hi;
  const double w = static_cast<double>(batch - b0.batch_size) / static_cast<double>(b1.batch_size - b0.batch_size);
  const auto lerp = [w](double t0, double t1) { return t0 + (t1 - t0) * w; };
  BatchTimes t{batch, lerp(b0.io_s, b1.io_s), lerp(b0.optimizer_s, b1.optimizer_s),
               lerp(b0.unattributed_s, b1.unattributed_s), {}, {}};
  for (std::size_t k = 0; k < layers.size(); ++k) {
    t.forward_s.push_back(lerp(b0.forward_s[k], b1.forward_s[k]));
    t.backward_s.push_back(lerp(b0.backward_s[k], b1.backward_s[k]));
  }
  return with_times(*this, t);
}

}  // namespace ddlsim::models
