#include "models/event_decisions.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ddlsim::models {

DecisionSource read_decision_source(ObjectReader& params, bool surrogate_needs_trace, bool live_allowed) {
  DecisionSource s;
  s.path = params.path();
  const std::string decisions = live_allowed ? params.choice("decisions", {"trace", "surrogate", "live"}, "trace")
                                             : params.choice("decisions", {"trace", "surrogate"}, "trace");
  if (decisions == "live") {
    s.live = true;
    if (params.has("trace"))
      throw ConfigError(params.path_of("trace"),
                        "not with \"decisions\": \"live\" (the decisions come from the co-simulated training's own "
                        "parameter norms, docs/convergence.md)");
    if (params.has("windows")) throw ConfigError(params.path_of("windows"), "only with \"decisions\": \"surrogate\"");
    return s;
  }
  s.surrogate = decisions == "surrogate";
  if (params.has("trace")) {
    s.trace_file = params.required_string("trace");
    if (s.trace_file.empty())
      throw ConfigError(params.path_of("trace"),
                        "expected the name of a training trace file (docs/traces.md; e.g. "
                        "\"traces/eventgrad_cnn_event_adaptive_4w.json\"), got an empty string");
  }
  if (s.trace_file.empty() && (!s.surrogate || surrogate_needs_trace)) (void)params.require("trace");
  if (params.has("windows") && !s.surrogate)
    throw ConfigError(params.path_of("windows"), "only with \"decisions\": \"surrogate\"");
  s.windows = static_cast<int>(params.integer("windows", 10, 1, 10'000));
  return s;
}

std::shared_ptr<const TrainingTrace> load_decision_trace(const DecisionSource& source, const SyncBinding& binding,
                                                         const std::string& algorithm) {
  if (source.trace_file.empty()) return nullptr;
  const std::string at = pointer_append(source.path, "trace");
  auto trace = std::make_shared<TrainingTrace>(TrainingTrace::load(binding.resolve(source.trace_file), at));
  const auto in_trace = [&](const std::string& what) {
    return ConfigError(at, fmt::format("training trace \"{}\" {}", source.trace_file, what));
  };
  if (trace->algorithm.name != algorithm)
    throw in_trace(fmt::format("was recorded under \"{}\", not \"{}\"; record one with tools/record_training.py "
                               "--algorithm {}",
                               trace->algorithm.name, algorithm, algorithm));
  if (source.surrogate) return trace;
  if (trace->workers != binding.workers)
    throw in_trace(fmt::format("has {} workers, the platform {}; replaying a trace needs the same workers "
                               "(record one with --workers {}, or use \"decisions\": \"surrogate\")",
                               trace->workers, binding.workers, binding.workers));
  if (trace->iterations < binding.iterations)
    throw in_trace(fmt::format("has {} iterations, the workload asks for {}; set /workload/iterations to at most {}",
                               trace->iterations, binding.iterations, trace->iterations));
  return trace;
}

void check_trace_bytes(const TrainingTrace& trace, const SyncBinding& binding, const DecisionSource& source) {
  const double profile = binding.profile->grad_bytes();
  const double traced = trace.model_bytes();
  if (std::fabs(profile - traced) > 0.5)
    throw ConfigError(pointer_append(source.path, "trace"),
                      fmt::format("training trace \"{}\" is of model \"{}\" with {} tensors of {:.0f} bytes in all; the "
                                  "profile \"{}\" has {:.0f} gradient bytes: use a profile of the traced model",
                                  source.trace_file, trace.model, trace.tensor_count(), traced,
                                  binding.profile->model, profile));
}

double surrogate_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  // splitmix64 over the four inputs
  std::uint64_t x = seed;
  for (std::uint64_t v : {a, b, c}) {
    x += 0x9E3779B97F4A7C15ULL + v;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
  }
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

int window_of(int k, int first, int last, int windows) {
  const int span = last - first + 1;
  if (span <= 0 || k <= first) return 0;
  const int length = (span + windows - 1) / windows;
  return std::min((k - first) / length, (span - 1) / length);
}

TensorRates fit_tensor_rates(const TrainingTrace& t, const DecisionSource& source) {
  TensorRates r;
  r.first = std::max(0, t.algorithm.trigger.initial_comm_passes - 1);  // passes p < P always send
  r.last = t.iterations - 1;
  r.windows = source.windows;
  if (r.first > r.last)
    throw ConfigError(pointer_append(source.path, "trace"),
                      fmt::format("training trace \"{}\" has only its {} initial passes ({} iterations): nothing to fit "
                                  "a surrogate to",
                                  source.trace_file, r.first, t.iterations));
  std::string previous;
  for (int i = 0; i < t.tensor_count(); ++i) {
    const auto& name = t.tensors[static_cast<std::size_t>(i)].name;
    const std::string layer = name.substr(0, name.rfind('.'));
    if (r.representative.empty() || layer != previous) r.representative.push_back(i);
    else if (t.tensors[static_cast<std::size_t>(i)].numel > t.tensors[static_cast<std::size_t>(r.representative.back())].numel)
      r.representative.back() = i;
    previous = layer;
  }
  const auto count = static_cast<std::size_t>(window_of(r.last, r.first, r.last, r.windows) + 1);
  r.per_tensor.assign(static_cast<std::size_t>(t.tensor_count()), std::vector<double>(count, 0));
  std::vector<double> pairs(count, 0);
  for (int k = r.first; k <= r.last; ++k) {
    const auto win = static_cast<std::size_t>(window_of(k, r.first, r.last, r.windows));
    pairs[win] += t.workers;
    for (int w = 0; w < t.workers; ++w)
      for (int i = 0; i < t.tensor_count(); ++i) r.per_tensor[static_cast<std::size_t>(i)][win] += t.sent(k, w, i) ? 1 : 0;
  }
  for (auto& per : r.per_tensor)
    for (std::size_t win = 0; win < count; ++win) per[win] /= pairs[win];
  return r;
}

int TensorRates::tensor_at_depth(double depth) const {
  const auto groups = representative.size();
  return representative[std::min(groups - 1, static_cast<std::size_t>(depth * static_cast<double>(groups)))];
}

double TensorRates::rate(int tensor, int k) const {
  if (k < first) return 1;
  return per_tensor[static_cast<std::size_t>(tensor)][static_cast<std::size_t>(window_of(k, first, last, windows))];
}

nlohmann::json describe_source(const DecisionSource& source, const TrainingTrace* trace) {
  nlohmann::json j{{"source", source.surrogate ? "surrogate" : "trace"}};
  if (source.surrogate) j["windows"] = source.windows;
  if (trace != nullptr) {
    j["trace_file"] = source.trace_file;
    j["trace"] = trace->describe();
  }
  return j;
}

}  // namespace ddlsim::models
