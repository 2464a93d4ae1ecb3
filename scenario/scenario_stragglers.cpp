// ddlsim: the scenario's "training.stragglers" section: per-rank compute-time factors (speed_factors,
// slow ranks) and the noise drawn per iteration (docs/scenario.md).
#include "scenario/sections.hpp"

#include <fmt/format.h>

#include <limits>

namespace ddlsim::sim {
namespace {

/// A straggler's compute-time factor (speed_factors, slow[].factor, and their product per rank).
constexpr double MIN_SPEED_FACTOR = 1e-6;
constexpr double MAX_SPEED_FACTOR = 1e6;

}  // namespace

StragglerSpec read_stragglers(ObjectReader& r, int workers) {
  StragglerSpec spec;
  if (const json* f = r.find("speed_factors")) {
    if (!f->is_array() || static_cast<int>(f->size()) != workers)
      throw ConfigError(r.path_of("speed_factors"),
                        fmt::format("expected an array of {} compute-time factors (one per worker), got {}", workers,
                                    f->is_array() ? fmt::format("{} values", f->size()) : json_type_name(*f)));
    for (std::size_t i = 0; i < f->size(); ++i)
      spec.speed_factors.push_back(checked_number((*f)[i], fmt::format("{}/{}", r.path_of("speed_factors"), i),
                                                  MIN_SPEED_FACTOR, MAX_SPEED_FACTOR));
  }
  if (const json* slow = r.find("slow")) {
    if (!slow->is_array()) throw ConfigError(r.path_of("slow"), fmt::format("expected an array, got {}", json_type_name(*slow)));
    if (spec.speed_factors.empty()) spec.speed_factors.assign(static_cast<std::size_t>(workers), 1.0);
    for (std::size_t i = 0; i < slow->size(); ++i) {
      ObjectReader e((*slow)[i], fmt::format("{}/{}", r.path_of("slow"), i));
      const auto rank = e.required_integer("rank", 0, workers - 1);
      const double factor = e.number("factor", 2.0, MIN_SPEED_FACTOR, MAX_SPEED_FACTOR);
      e.finish();
      double& combined = spec.speed_factors[static_cast<std::size_t>(rank)];
      combined *= factor;
      if (combined < MIN_SPEED_FACTOR || combined > MAX_SPEED_FACTOR)
        throw ConfigError(e.path_of("factor"),
                          fmt::format("rank {}'s factors multiply to {:g}, outside [{:g}, {:g}] (a compute-time "
                                      "factor's range)",
                                      rank, combined, MIN_SPEED_FACTOR, MAX_SPEED_FACTOR));
    }
  }
  const std::string dist = r.choice("distribution", {"none", "normal", "lognormal", "exponential"}, "none");
  spec.distribution = dist == "none"        ? NoiseDistribution::NONE
                      : dist == "normal"    ? NoiseDistribution::NORMAL
                      : dist == "lognormal" ? NoiseDistribution::LOGNORMAL
                                            : NoiseDistribution::EXPONENTIAL;
  if (spec.distribution == NoiseDistribution::NONE && r.raw().contains("sigma"))
    throw ConfigError(r.path_of("sigma"), "only valid with a noise \"distribution\" (normal, lognormal, exponential)");
  if (spec.distribution != NoiseDistribution::NONE && !r.raw().contains("sigma"))
    throw ConfigError(r.path_of("sigma"), fmt::format("missing: distribution \"{}\" needs its \"sigma\" (a number > 0){}",
                                                      dist, r.misspelling_hint("sigma")));
  spec.sigma = r.number("sigma", 0.0, 0.0, 100.0);
  if (spec.distribution != NoiseDistribution::NONE && spec.sigma <= 0)
    throw ConfigError(r.path_of("sigma"),
                      fmt::format("sigma 0 makes distribution \"{}\" draw no noise; give sigma > 0, or \"distribution\": \"none\"", dist));
  if (r.find("seed")) {
    if (spec.distribution == NoiseDistribution::NONE)
      throw ConfigError(r.path_of("seed"), "only valid with a noise \"distribution\" (normal, lognormal, exponential): "
                                           "it seeds the noise alone");
    spec.seed = static_cast<std::uint64_t>(r.integer("seed", 0, 0, std::numeric_limits<std::int64_t>::max()));
  }
  return spec;
}

}  // namespace ddlsim::sim
