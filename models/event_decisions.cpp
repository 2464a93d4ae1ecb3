#include "models/event_decisions.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ddlsim::models {

DecisionSource read_decision_source(ObjectReader& params, bool surrogate_needs_trace) {
  DecisionSource s;
  s.path = params.path();
  s.surrogate = params.choice("decisions", {"trace", "surrogate"}, "trace") == "surrogate";
  if (params.has("trace")) s.trace_file = params.required_string("trace");
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
