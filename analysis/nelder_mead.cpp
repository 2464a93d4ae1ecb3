// ddlsim: a bounded Nelder-Mead minimiser (analysis/nelder_mead.hpp).
#include "analysis/nelder_mead.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ddlsim::analysis {

std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                const std::vector<double>& lo, const std::vector<double>& hi) {
  const std::size_t n = x0.size();
  auto clamp = [&](std::vector<double> x) {
    for (std::size_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], lo[i], hi[i]);
    return x;
  };
  std::vector<std::vector<double>> simplex{clamp(x0)};
  for (std::size_t i = 0; i < n; ++i) {
    auto x = x0;
    x[i] += x0[i] + 0.3 <= hi[i] ? 0.3 : -0.3;  // a step that clamping would undo collapses the simplex
    simplex.push_back(clamp(x));
  }
  std::vector<double> value;
  for (const auto& x : simplex) value.push_back(f(x));
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::vector<std::size_t> order(simplex.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return value[a] < value[b]; });
    std::vector<std::vector<double>> s2;
    std::vector<double> v2;
    for (auto i : order) s2.push_back(simplex[i]), v2.push_back(value[i]);
    simplex = std::move(s2), value = std::move(v2);
    double size = 0;
    for (std::size_t i = 1; i <= n; ++i)
      for (std::size_t j = 0; j < n; ++j) size = std::max(size, std::abs(simplex[i][j] - simplex[0][j]));
    if (size < 1e-7 || value[n] - value[0] <= 1e-15 * (1 + value[0])) break;
    std::vector<double> centroid(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) centroid[j] += simplex[i][j] / static_cast<double>(n);
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (std::size_t j = 0; j < n; ++j) x[j] = centroid[j] + t * (simplex[n][j] - centroid[j]);
      return clamp(x);
    };
    const auto xr = along(-1);
    const double fr = f(xr);
    if (fr < value[0]) {
      const auto xe = along(-2);
      const double fe = f(xe);
      if (fe < fr) simplex[n] = xe, value[n] = fe;
      else simplex[n] = xr, value[n] = fr;
    } else if (fr < value[n - 1]) {
      simplex[n] = xr, value[n] = fr;
    } else {
      const auto xc = fr < value[n] ? along(-0.5) : along(0.5);
      const double fc = f(xc);
      if (fc < std::min(fr, value[n])) {
        simplex[n] = xc, value[n] = fc;
      } else {
        for (std::size_t i = 1; i <= n; ++i) {
          for (std::size_t j = 0; j < n; ++j) simplex[i][j] = simplex[0][j] + 0.5 * (simplex[i][j] - simplex[0][j]);
          value[i] = f(simplex[i]);
        }
      }
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < simplex.size(); ++i)
    if (value[i] < value[best]) best = i;
  return simplex[best];
}

}  // namespace ddlsim::analysis
