// ddlsim: a bounded Nelder-Mead minimiser for the calibration's factors (analysis/calibration.cpp).
#pragma once

#include <functional>
#include <vector>

namespace ddlsim::analysis {

/// Nelder-Mead on up to two coordinates (a point is clamped into [lo, hi] before evaluation);
/// returns the best point found.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                const std::vector<double>& lo, const std::vector<double>& hi);

}  // namespace ddlsim::analysis
