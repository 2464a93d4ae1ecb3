// ddlsim: the fit behind `ddlsim calibrate` (analysis/calibration_fit.hpp).
#include "analysis/calibration_fit.hpp"

#include "analysis/nelder_mead.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ddlsim::analysis::calibration_fit {

using models::Rendezvous;
using models::SoftwareCost;

namespace {

/// The ranges searched, and the default call cost of an uncalibrated scenario (network.collective_call_cost).
// A bandwidth factor above 1 would move bytes faster than the line: no fit may beat the wire.
// A latency factor below 1 would make a path faster than its links' latency: no fit may beat the light.
constexpr double MIN_FACTOR = 1e-2, MIN_LATENCY_FACTOR = 1, MAX_LATENCY_FACTOR = 1e2, MAX_BANDWIDTH_FACTOR = 1;
/// The prior toward the base preset, in units of squared relative error: w (ln lf)^2 + w (ln bf)^2 +
/// w ((o - o_base) / o_scale)^2 + w ((c - c_base) / c_scale)^2. At 1e-8 it moves no identifiable
/// parameter measurably (a row 0.01 % off weighs as much as a factor e^1 away from the preset) and
/// picks the preset's value along any direction the rows leave flat.
constexpr double PRIOR_WEIGHT = 1e-8;
constexpr double PRIOR_SCALE_S = 1e-3;  // the overhead's and call cost's scale: the preset's value, at least 1 ms
constexpr double MAX_OVERHEAD_S = 1.0;  // the range network.software accepts per side

/// The fit of (o, c) for fixed factors: minimise sum((b_i + n_i o + c) / y_i - 1)^2 with o, c >= 0,
/// the free ones only. Returns the squared error and sets o, c.
struct Linear {
  bool fit_o = true, fit_c = true;
  double fixed_o = 0, fixed_c = 0;  // the base preset's: the fixed values, and the prior's targets
  [[nodiscard]] double weight_o() const { return PRIOR_WEIGHT / std::pow(std::max(fixed_o, PRIOR_SCALE_S), 2); }
  [[nodiscard]] double weight_c() const { return PRIOR_WEIGHT / std::pow(std::max(fixed_c, PRIOR_SCALE_S), 2); }
};

double solve_linear(const std::vector<Prepared>& rows, const std::vector<double>& base, const Linear& lin, double& o,
                    double& c) {
  // r_i = t_i - a_i o - d_i c with t_i = 1 - b_i / y_i (moved to the fixed parts), a_i = n_i / y_i, d_i = 1 / y_i.
  const double wo = lin.fit_o ? lin.weight_o() : 0.0, wc = lin.fit_c ? lin.weight_c() : 0.0;
  auto sse = [&](double oo, double cc) {
    double s = wo * (oo - lin.fixed_o) * (oo - lin.fixed_o) + wc * (cc - lin.fixed_c) * (cc - lin.fixed_c);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double r = (base[i] + rows[i].steps * oo + cc) / rows[i].measured_s - 1;
      s += r * r;
    }
    return s;
  };
  double saa = 0, sad = 0, sdd = 0, sat = 0, sdt = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double y = rows[i].measured_s;
    const double a = rows[i].steps / y, d = 1 / y;
    const double t = 1 - (base[i] + (lin.fit_o ? 0 : rows[i].steps * lin.fixed_o) + (lin.fit_c ? 0 : lin.fixed_c)) / y;
    saa += a * a, sad += a * d, sdd += d * d, sat += a * t, sdt += d * t;
  }
  struct Option {
    double o, c;
  };
  std::vector<Option> options;
  const double o_fixed = lin.fixed_o, c_fixed = lin.fixed_c;
  auto clamp_o = [](double v) { return std::clamp(v, 0.0, 2 * MAX_OVERHEAD_S); };
  auto clamp_c = [](double v) { return std::clamp(v, 0.0, 1.0); };
  // The prior adds w_o (o - o_base)^2 + w_c (c - c_base)^2: a ridge toward the base preset.
  saa += wo, sdd += wc, sat += wo * o_fixed, sdt += wc * c_fixed;
  if (lin.fit_o && lin.fit_c) {
    const double det = saa * sdd - sad * sad;
    if (det > 1e-12 * saa * sdd) {
      const double oo = (sat * sdd - sdt * sad) / det, cc = (saa * sdt - sad * sat) / det;
      if (oo >= 0 && cc >= 0) options.push_back({clamp_o(oo), clamp_c(cc)});
    }
    // The boundary: one of them zero (its own best with the other at 0).
    if (saa > 0) options.push_back({clamp_o(sat / saa), 0});
    if (sdd > 0) options.push_back({0, clamp_c(sdt / sdd)});
    options.push_back({0, 0});
  } else if (lin.fit_o) {
    options.push_back({saa > 0 ? clamp_o(sat / saa) : 0, c_fixed});
  } else if (lin.fit_c) {
    options.push_back({o_fixed, sdd > 0 ? clamp_c(sdt / sdd) : 0});
  } else {
    options.push_back({o_fixed, c_fixed});
  }
  double best = std::numeric_limits<double>::infinity();
  for (const auto& opt : options) {
    const double s = sse(opt.o, opt.c);
    if (s < best) best = s, o = opt.o, c = opt.c;
  }
  return best;
}

}  // namespace

double closed_form(const Prepared& p, double lf, double bf, const std::shared_ptr<const SoftwareCost>& sw) {
  models::AlphaBeta ab(p.alpha_s * lf, p.beta_s / bf);
  ab.software = sw;
  return p.collective->analytic_time_s(p.group, p.bytes, ab);
}

std::vector<Segments> segment_candidates(const SoftwareCost& base, bool search) {
  std::vector<Segments> out{{base.rendezvous, base.eager_limit_bytes, base.segment_bytes, base.segments_in_flight}};
  if (!search) return out;
  auto add = [&out](Segments s) {
    for (const auto& o : out)
      if (o.rendezvous == s.rendezvous && o.eager_limit_bytes == s.eager_limit_bytes &&
          o.segment_bytes == s.segment_bytes && o.in_flight == s.in_flight)
        return;
    out.push_back(s);
  };
  add({Rendezvous::NONE, 0, 0, 2});
  add({Rendezvous::MESSAGE, 0, 0, 2});
  add({Rendezvous::MESSAGE, 65536, 0, 2});
  for (double s : {65536.0, 262144.0, 1048576.0, 4194304.0})
    for (int k : {2, 4, 8}) add({Rendezvous::SEGMENT, 0, s, k});
  return out;
}


/// The search: per segment candidate, the factors by Nelder-Mead from twelve starts (bounded), the
/// overhead and call cost by linear least squares at each; the best candidate's fit.
Fit search(std::vector<Prepared>& train, const SoftwareCost& base, const std::set<std::string>& fit,
           const std::vector<Segments>& candidates) {
  const Linear lin{fit.count("overhead") != 0, fit.count("call_cost") != 0,
                   base.send_overhead_s + base.recv_overhead_s, base.call_cost_s.value_or(DEFAULT_CALL_S)};
  const bool fit_lf = fit.count("latency_factor") != 0, fit_bf = fit.count("bandwidth_factor") != 0;
  Fit best;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    SoftwareCost zero = candidates[k].apply(base);
    zero.send_overhead_s = zero.recv_overhead_s = 0;
    const auto sw0 = std::make_shared<const SoftwareCost>(zero);
    SoftwareCost unit = zero;
    unit.send_overhead_s = unit.recv_overhead_s = 0.5;  // o = 1 s: the step count
    const auto sw1 = std::make_shared<const SoftwareCost>(unit);
    for (auto& p : train) {
      const double diff = closed_form(p, 1, 1, sw1) - closed_form(p, 1, 1, sw0);
      p.steps = std::abs(diff - std::round(diff)) < 1e-6 ? std::round(diff) : diff;
    }
    std::vector<double> b(train.size());
    Fit here;
    auto evaluate = [&](double lf, double bf) {
      for (std::size_t i = 0; i < train.size(); ++i) b[i] = closed_form(train[i], lf, bf, sw0);
      double o = 0, c = 0;
      const double sse = solve_linear(train, b, lin, o, c) +
                         PRIOR_WEIGHT * (std::pow(std::log(lf), 2) + std::pow(std::log(bf), 2));
      if (sse < here.sse) here = Fit{sse, lf, bf, o, c, k};
      return sse;
    };
    std::vector<double> lo, hi;
    if (fit_lf) lo.push_back(std::log(MIN_FACTOR)), hi.push_back(std::log(MAX_LATENCY_FACTOR));
    if (fit_bf) lo.push_back(std::log(MIN_FACTOR)), hi.push_back(std::log(MAX_BANDWIDTH_FACTOR));
    auto from = [&](const std::vector<double>& x) {
      std::size_t j = 0;
      // The search also walks below the bound (the landscape is flat there: every lf < 1 is priced as 1),
      // so that it starts from where it always did; the fit never leaves the physical range.
      const double lf = fit_lf ? std::max(MIN_LATENCY_FACTOR, std::exp(x[j++])) : 1.0;
      const double bf = fit_bf ? std::exp(x[j]) : 1.0;
      return std::pair{lf, bf};
    };
    if (lo.empty()) {
      evaluate(1, 1);
    } else {
      // Fixed starts over the physical range: lf in {1, 1.5, 3, 10} x bf in {1, 0.8, 0.5}.
      std::vector<std::array<double, 2>> starts;
      for (const double lf0 : {1.0, 1.5, 3.0, 10.0})
        for (const double bf0 : {1.0, 0.8, 0.5}) starts.push_back({std::log(lf0), std::log(bf0)});
      for (const auto& start : starts) {
        std::vector<double> x0;
        if (fit_lf) x0.push_back(start[0]);
        if (fit_bf) x0.push_back(start[1]);
        // Restarted from where it stopped while that still improves: the simplex can stall on the
        // kinks the non-negative overhead and call cost put in the landscape.
        for (int restart = 0; restart < 6; ++restart) {
          const double before = here.sse;
          x0 = nelder_mead([&](const std::vector<double>& x) { auto [lf, bf] = from(x); return evaluate(lf, bf); }, x0,
                           lo, hi);
          if (!(here.sse < before * (1 - 1e-9))) break;
        }
      }
    }
    // Only a real improvement displaces an earlier candidate (the base's own first): candidates
    // that predict the same (e.g. one segment per message) tie up to rounding.
    // (A relative error of 1e-5 per row is far below any measurement's noise.)
    if (here.sse < best.sse * (1 - 1e-6) - 1e-10 * static_cast<double>(train.size())) best = here;
  }
  return best;
}

/// The software of a fit: the candidate's segments on the base preset, its overhead (split evenly
/// into send and receive) and call cost.
SoftwareCost fitted_software(const Fit& f, const std::vector<Segments>& candidates, const SoftwareCost& base,
                             const std::string& preset) {
  SoftwareCost out = candidates[f.segments].apply(base);
  out.preset = preset;
  out.send_overhead_s = out.recv_overhead_s = f.o / 2;
  out.call_cost_s = f.c;
  return out;
}

/// What the base preset, uncalibrated, predicts for a row (its own call cost, or the default).
double base_time_s(const Prepared& p, const std::shared_ptr<const SoftwareCost>& base) {
  return base->call_cost_s.value_or(DEFAULT_CALL_S) + closed_form(p, 1, 1, base);
}
}  // namespace ddlsim::analysis::calibration_fit
