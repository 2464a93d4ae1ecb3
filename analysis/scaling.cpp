#include "analysis/scaling.hpp"

#include "models/units.hpp"

#include <cmath>
#include <fmt/format.h>
#include <numbers>

namespace ddlsim::analysis {

double noise_mean(const sim::StragglerSpec& s) {
  switch (s.distribution) {
    case sim::NoiseDistribution::NONE:
    case sim::NoiseDistribution::LOGNORMAL: return 1.0;
    case sim::NoiseDistribution::NORMAL: {
      if (s.sigma <= 0) return 1.0;
      // E[max(0, X)], X ~ N(1, sigma^2): Phi(1/sigma) + sigma phi(1/sigma).
      const double z = 1.0 / s.sigma;
      const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
      const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
      return cdf + s.sigma * pdf;
    }
    case sim::NoiseDistribution::EXPONENTIAL: return 1.0 + s.sigma;
  }
  return 1.0;
}

ScalingBaseline scaling_baseline(const sim::Scenario& sc) {
  ScalingBaseline b;
  b.single_worker_iteration_s = sc.workload.worker.single_worker_iteration_s;
  if (!(b.single_worker_iteration_s > 0)) return b;
  const auto& stragglers = sc.training.stragglers;
  const double per_worker = static_cast<double>(sc.workload.worker.samples) /
                            (noise_mean(stragglers) * b.single_worker_iteration_s);
  for (int i = 0; i < sc.platform.workers; ++i) {
    const double f = stragglers.speed_factors.empty() ? 1.0 : stragglers.speed_factors[static_cast<std::size_t>(i)];
    b.workers_alone_throughput += per_worker / f;
  }
  return b;
}

nlohmann::json compute_json(const sim::Scenario& sc) {
  const auto& bucketing = sc.training.bucketing;
  const auto& profile = sc.workload.worker.profile;
  nlohmann::json j;
  j["compute_scale"] = sc.workload.compute_scale;
  j["unattributed_time_per_iteration_s"] = profile.unattributed_s;
  j["framework_overhead_per_iteration_s"] = sc.workload.framework_overhead_s;
  j["bucket_copy_bandwidth_Bps"] =
      bucketing.copy_bandwidth_Bps > 0 ? nlohmann::json(bucketing.copy_bandwidth_Bps) : nlohmann::json(nullptr);
  // Into the flat buffers and back out: every gradient byte twice.
  j["bucket_copy_time_per_exchange_s"] =
      bucketing.copy_bandwidth_Bps > 0 ? 2 * profile.grad_bytes() / bucketing.copy_bandwidth_Bps : 0.0;
  return j;
}

std::string compute_line(const sim::Scenario& sc) {
  std::string out;
  const auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (sc.workload.compute_scale != 1) add(fmt::format("compute_scale {:g}", sc.workload.compute_scale));
  if (const double u = sc.workload.worker.profile.unattributed_s; u > 0) add(fmt::format("unattributed {:.6g} s", u));
  if (const double o = sc.workload.framework_overhead_s; o > 0) add(fmt::format("framework overhead {:.6g} s", o));
  if (const double bw = sc.training.bucketing.copy_bandwidth_Bps; bw > 0)
    add(fmt::format("bucket copies at {}", units::format_bandwidth(bw)));
  return out;
}

}  // namespace ddlsim::analysis
