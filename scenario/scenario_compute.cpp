// ddlsim: the workload's compute-side settings beyond the profile (docs/scenario.md, "workload"):
// compute_scale, a what-if multiplier of every compute time of the profile, and the framework's
// per-iteration overhead.
#include "scenario/scenario.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ddlsim::sim {
namespace {

/// The largest compute_scale accepted (as a straggler's speed factor).
constexpr double MAX_COMPUTE_SCALE = 1e6;

double read_compute_scale(ObjectReader& w) {
  const json* v = w.find("compute_scale");
  if (v == nullptr) return 1.0;
  const std::string path = w.path_of("compute_scale");
  if (!v->is_number()) throw ConfigError(path, fmt::format("expected a number, got {}", json_type_name(*v)));
  const double scale = v->get<double>();
  if (!std::isfinite(scale) || !(scale > 0) || scale > MAX_COMPUTE_SCALE)
    throw ConfigError(path, fmt::format("expected a number in (0, {}] (a multiplier of every compute time of the "
                                        "profile), got {}",
                                        MAX_COMPUTE_SCALE, v->dump()));
  return scale;
}

}  // namespace

void read_compute_costs(ObjectReader& w, Scenario& s) {
  s.workload.compute_scale = read_compute_scale(w);
  s.workload.framework_overhead_s = w.time_s("framework_overhead_s", 0) * s.workload.compute_scale;
  s.workload.profile = models::scale_compute(s.workload.profile, s.workload.compute_scale);
}

}  // namespace ddlsim::sim
