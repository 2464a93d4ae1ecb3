// ddlsim: the fit behind `ddlsim calibrate` (analysis/calibration.hpp): each row's closed form, the
// segment candidates, the linear solve of the overhead and call cost and the Nelder-Mead search of
// the factors, within their physical bounds and with the prior toward the base preset.
#pragma once

#include "models/collective.hpp"
#include "models/software_cost.hpp"

#include <cstddef>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::analysis::calibration_fit {

/// The default call cost of an uncalibrated scenario (network.collective_call_cost).
inline constexpr double DEFAULT_CALL_S = 10e-6;

/// One row, ready to predict.
struct Prepared {
  std::shared_ptr<const models::Collective> collective;
  models::CollectiveGroup group;
  double bytes = 0, alpha_s = 0, beta_s = 0, measured_s = 0;
  double steps = 0;  // how many times the closed form pays the per-step overhead (per segment candidate)
};

/// The row's closed form with the factors and software given.
double closed_form(const Prepared& p, double lf, double bf, const std::shared_ptr<const models::SoftwareCost>& sw);

/// A candidate segment behaviour, applied to the base preset.
struct Segments {
  models::Rendezvous rendezvous = models::Rendezvous::NONE;
  double eager_limit_bytes = 0, segment_bytes = 0;
  int in_flight = 2;
  [[nodiscard]] models::SoftwareCost apply(models::SoftwareCost c) const {
    c.rendezvous = rendezvous;
    c.eager_limit_bytes = eager_limit_bytes;
    c.segment_bytes = segment_bytes;
    c.segments_in_flight = in_flight;
    return c;
  }
};

/// The base's own segment behaviour first; with `search`, the other candidates (docs/validation.md).
std::vector<Segments> segment_candidates(const models::SoftwareCost& base, bool search);

struct Fit {
  double sse = std::numeric_limits<double>::infinity();
  double lf = 1, bf = 1, o = 0, c = 0;
  std::size_t segments = 0;
};

/// The search: per segment candidate, the factors by Nelder-Mead from twelve starts, each restarted
/// while it improves, the overhead and call cost by linear least squares at each; the best
/// candidate's fit. Sets each row's `steps`.
Fit search(std::vector<Prepared>& train, const models::SoftwareCost& base, const std::set<std::string>& fit,
           const std::vector<Segments>& candidates);

/// The software of a fit: the candidate's segments on the base preset, its overhead (split evenly
/// into send and receive) and call cost.
models::SoftwareCost fitted_software(const Fit& f, const std::vector<Segments>& candidates,
                                     const models::SoftwareCost& base, const std::string& preset);

/// What the base preset, uncalibrated, predicts for a row (its own call cost, or the default).
double base_time_s(const Prepared& p, const std::shared_ptr<const models::SoftwareCost>& base);

}  // namespace ddlsim::analysis::calibration_fit
