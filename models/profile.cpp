#include "models/profile.hpp"

#include "models/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::models {

double Profile::forward_s() const {
  double t = 0;
  for (const auto& l : layers) t += l.forward_s;
  return t;
}
double Profile::backward_s() const {
  double t = 0;
  for (const auto& l : layers) t += l.backward_s;
  return t;
}
double Profile::grad_bytes() const {
  double b = 0;
  for (const auto& l : layers) b += l.grad_bytes;
  return b;
}
std::int64_t Profile::parameters() const {
  std::int64_t p = 0;
  for (const auto& l : layers) p += l.parameters;
  return p;
}
double Profile::iteration_compute_s() const {
  return unattributed_s + io_s + forward_s() + backward_s() + optimizer_s;
}

namespace {
constexpr std::int64_t MAX_INT = std::numeric_limits<std::int64_t>::max();

int bytes_per_param(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  return 4;
}

/// Refuses a model whose parameters or gradient bytes add up beyond a size's range (units::MAX_BYTES).
void check_model_size(const Profile& p, const std::string& path) {
  double parameters = 0;
  for (const auto& l : p.layers) parameters += static_cast<double>(l.parameters);
  if (parameters > static_cast<double>(MAX_PARAMETERS))
    throw ConfigError(path, fmt::format("the layers' parameters add up to {:g}, above the limit of {:g}", parameters,
                                        static_cast<double>(MAX_PARAMETERS)));
  if (p.grad_bytes() > units::MAX_BYTES)
    throw ConfigError(path, fmt::format("the layers' gradients add up to {:g} B, above the limit of {:g} B",
                                        p.grad_bytes(), units::MAX_BYTES));
}
}  // namespace


Profile parse_profile(const json& value, const std::string& path) {
  ObjectReader r(value, path);
  Profile p;
  p.model = r.required_string("model");
  p.batch_size = r.integer("batch_size", 32, 1, MAX_INT);
  p.device = r.string("device", "");
  p.dtype = r.choice("dtype", {"fp32", "fp16", "bf16"}, "fp32");
  p.provenance = r.string("provenance", "");
  p.optimizer_s = r.time_s("optimizer_s", 0);
  p.io_s = r.time_s("io_s", 0);
  const bool unattributed_given = r.has("unattributed_s");
  p.unattributed_s = r.time_s("unattributed_s", 0);
  const json& layers = r.require("layers");
  const std::string layers_path = r.path_of("layers");
  if (!layers.is_array())
    throw ConfigError(layers_path, fmt::format("expected an array of layers, got {}", json_type_name(layers)));
  if (layers.empty()) throw ConfigError(layers_path, "expected at least one layer, got an empty array");
  if (layers.size() > static_cast<std::size_t>(MAX_LAYERS))
    throw ConfigError(layers_path, fmt::format("expected at most {} layers, got {}", MAX_LAYERS, layers.size()));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    ObjectReader lr(layers[i], fmt::format("{}/{}", layers_path, i));
    Layer l;
    l.name = lr.string("name", fmt::format("layer{}", i));
    l.forward_s = lr.time_s("forward_s", 0);
    l.backward_s = lr.time_s("backward_s", 0);
    l.parameters = lr.integer("parameters", 0, 0, MAX_PARAMETERS);
    l.grad_bytes = lr.bytes("grad_bytes", static_cast<double>(l.parameters) * bytes_per_param(p.dtype));
    lr.finish();
    p.layers.push_back(std::move(l));
  }
  check_model_size(p, layers_path);
  if (const json* batches = r.find("batch_profiles"))
    p.measured_batches = parse_batch_profiles(*batches, r.path_of("batch_profiles"), p, layers_path, unattributed_given);
  r.finish();
  return p;
}

Profile load_profile_file(const std::string& file, const std::string& ref_path) {
  return load_referenced(file, "profile", ref_path, [](const json& doc) { return parse_profile(doc, ""); }, " file");
}

Profile synthetic_profile(ObjectReader& s) {
  Profile p;
  const auto layers = s.integer("layers", 10, 1, MAX_LAYERS);
  const double fwd = s.time_s("forward_s", 1e-3);
  const double bwd = s.time_s("backward_s", 2e-3);
  const double grad = s.bytes("grad_bytes", 4e6);
  p.model = s.string("model", "synthetic");
  p.optimizer_s = s.time_s("optimizer_s", 0);
  p.io_s = s.time_s("io_s", 0);
  p.unattributed_s = s.time_s("unattributed_s", 0);
  p.provenance = "uniform synthetic workload";
  for (std::int64_t i = 0; i < layers; ++i)
    p.layers.push_back(Layer{fmt::format("layer{}", i), fwd, bwd, static_cast<std::int64_t>(grad / 4), grad});
  check_model_size(p, s.path_of("grad_bytes"));
  return p;
}

Profile scale_batch(const Profile& profile, std::int64_t batch) {
  Profile out = profile;
  const double ratio = static_cast<double>(batch) / static_cast<double>(profile.batch_size);
  for (auto& layer : out.layers) {
    layer.forward_s *= ratio;
    layer.backward_s *= ratio;
  }
  out.io_s *= ratio;
  out.batch_size = batch;
  return out;
}

Profile scale_compute(const Profile& profile, double scale) {
  Profile out = profile;
  for (auto& layer : out.layers) {
    layer.forward_s *= scale;
    layer.backward_s *= scale;
  }
  out.optimizer_s *= scale;
  out.io_s *= scale;
  out.unattributed_s *= scale;
  for (auto& b : out.measured_batches) {
    b.io_s *= scale;
    b.optimizer_s *= scale;
    b.unattributed_s *= scale;
    for (auto& t : b.forward_s) t *= scale;
    for (auto& t : b.backward_s) t *= scale;
  }
  return out;
}

}  // namespace ddlsim::models
