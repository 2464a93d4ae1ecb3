#include "analysis/calibration.hpp"

#include "analysis/nelder_mead.hpp"
#include "analysis/row_rules.hpp"

#include "models/collective.hpp"
#include "models/error.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

namespace ddlsim::analysis {

const std::vector<std::string>& calibration_parameters() {
  static const std::vector<std::string> names{"latency_factor", "bandwidth_factor", "overhead", "call_cost", "segments"};
  return names;
}

namespace {

using models::Rendezvous;
using models::SoftwareCost;

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
constexpr double DEFAULT_CALL_S = 10e-6;

/// One row, ready to predict.
struct Prepared {
  std::shared_ptr<const models::Collective> collective;
  models::CollectiveGroup group;
  double bytes = 0, alpha_s = 0, beta_s = 0, measured_s = 0;
  double steps = 0;  // how many times the closed form pays the per-step overhead (per segment candidate)
};

double closed_form(const Prepared& p, double lf, double bf, const std::shared_ptr<const SoftwareCost>& sw) {
  models::AlphaBeta ab(p.alpha_s * lf, p.beta_s / bf);
  ab.software = sw;
  return p.collective->analytic_time_s(p.group, p.bytes, ab);
}

/// A candidate segment behaviour, applied to the base preset.
struct Segments {
  Rendezvous rendezvous = Rendezvous::NONE;
  double eager_limit_bytes = 0, segment_bytes = 0;
  int in_flight = 2;
  [[nodiscard]] SoftwareCost apply(SoftwareCost c) const {
    c.rendezvous = rendezvous;
    c.eager_limit_bytes = eager_limit_bytes;
    c.segment_bytes = segment_bytes;
    c.segments_in_flight = in_flight;
    return c;
  }
};

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

// ---- preparing rows ----

std::string pick_base(const MeasurementFile& file, const CalibrationOptions& options) {
  if (!options.base_software.empty()) {
    if (!models::software_preset(options.base_software))
      throw ConfigError("--software", fmt::format("unknown software preset \"{}\"; valid presets are: {}",
                                                  options.base_software, models::software_preset_names()));
    return options.base_software;
  }
  std::set<std::string> backends;
  for (const auto& m : file.rows) backends.insert(m.backend);
  if (backends.size() == 1 && *backends.begin() == "nccl") return "nccl_simple";
  if (backends.count("nccl") != 0)
    throw ConfigError("--software", "the rows mix nccl with other backends: calibrate them separately, or name the "
                                    "base preset with --software");
  return "gloo";
}

Prepared prepare(const Measurement& m, const std::string& file_name, const CalibrationOptions& options,
                 std::map<std::string, std::shared_ptr<const models::Collective>>& cache, std::string& name) {
  const std::string where = fmt::format("{}:{}", file_name, m.line);
  name = m.algorithm;
  if (m.algorithm == "library") {
    const auto it = options.library.find(m.op);
    if (it == options.library.end())
      throw ConfigError(where, fmt::format("no ddlsim collective models the library's {} (--library)", m.op));
    name = it->second;
  }
  auto& collective = cache[name];
  if (!collective) {
    auto& registry = models::CollectiveRegistry::instance();
    if (!registry.contains(name))
      throw ConfigError(where, fmt::format("algorithm: unknown collective \"{}\"; valid are: library, {}", name,
                                           join_names(registry.names())));
    collective = registry.create(name, json::object(), "/algorithm", "/params", "collective");
  }
  if (collective->operation() != m.op)
    throw ConfigError(where, fmt::format("\"{}\" is a {}, but the row's op is {}", name, collective->operation(), m.op));
  if (collective->uses_servers() && m.servers < 1)
    throw ConfigError(where, fmt::format("servers: \"{}\" needs at least one parameter server, got 0", name));
  if (!collective->uses_servers() && m.servers != 0)
    throw ConfigError(where, fmt::format("servers: \"{}\" uses no parameter servers, got {}", name, m.servers));
  if (m.ranks < 2) throw ConfigError(where, fmt::format("ranks: a collective needs at least 2 ranks, got {}", m.ranks));
  const auto bandwidth = m.bandwidth_Bps ? m.bandwidth_Bps : options.bandwidth_Bps;
  const auto latency = m.latency_s ? m.latency_s : options.latency_s;
  if (!bandwidth)
    throw ConfigError(where, "bandwidth_bps: the row gives no link rate; give the network it ran on with --bandwidth");
  if (!latency)
    throw ConfigError(where, "latency_s: the row gives no latency; give the network it ran on with --latency");
  Prepared p;
  p.collective = collective;
  p.group = models::CollectiveGroup(m.ranks, m.servers);
  p.bytes = m.bytes;
  p.alpha_s = *latency;
  p.beta_s = 1.0 / *bandwidth;
  p.measured_s = m.seconds;
  try {
    (void)closed_form(p, 1, 1, nullptr);
  } catch (const std::invalid_argument& e) {  // an algorithm refusing this group
    throw ConfigError(where, fmt::format("ranks: {}", e.what()));
  }
  return p;
}

struct Fit {
  double sse = std::numeric_limits<double>::infinity();
  double lf = 1, bf = 1, o = 0, c = 0;
  std::size_t segments = 0;
};

}  // namespace

ErrorStats error_stats(const std::vector<double>& errors) {
  ErrorStats s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs;
  for (double e : errors) {
    abs.push_back(std::abs(e));
    s.mean += e / static_cast<double>(errors.size());
    s.max_abs = std::max(s.max_abs, std::abs(e));
    (e < 0 ? s.too_fast : s.too_slow) += e != 0 ? 1 : 0;
  }
  std::sort(abs.begin(), abs.end());
  const std::size_t n = abs.size();
  s.median_abs = n % 2 == 1 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2;
  return s;
}

namespace {

/// The rows --select keeps, in file order; throws when none does.
std::vector<Measurement> select_rows(const MeasurementFile& file, const std::string& file_name,
                                     const CalibrationOptions& options) {
  std::vector<std::function<bool(const Measurement&, std::size_t)>> selects;
  for (const auto& spec : options.select) selects.push_back(row_rule(spec, "--select"));
  std::vector<Measurement> selected;
  for (std::size_t i = 0; i < file.rows.size(); ++i)
    if (std::all_of(selects.begin(), selects.end(), [&](const auto& r) { return r(file.rows[i], i); }))
      selected.push_back(file.rows[i]);
  if (selected.empty())
    throw ConfigError("--select", fmt::format("no row of {} matches {}", file_name, fmt::join(options.select, " and ")));
  return selected;
}

/// The selected rows, each prepared for its closed form (`all`) and, unless --holdout holds it out,
/// to be fitted (`train`); the latencies and bandwidths the fitted rows ran at.
struct PreparedRows {
  std::vector<Prepared> all, train;
  std::set<double> latencies, bandwidths;
};

using RowRules = std::vector<std::function<bool(const Measurement&, std::size_t)>>;

/// The --holdout rules (read before --select's, so that a bad one of each reports --holdout's).
RowRules holdout_rules(const CalibrationOptions& options) {
  RowRules rules;
  for (const auto& spec : options.holdout) rules.push_back(row_rule(spec, "--holdout"));
  return rules;
}

PreparedRows prepare_rows(const std::vector<Measurement>& selected, const RowRules& rules, const std::string& file_name,
                          const CalibrationOptions& options, CalibrationResult& result) {
  std::map<std::string, std::shared_ptr<const models::Collective>> cache;
  PreparedRows rows;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    CalibratedRow row;
    row.row = selected[i];
    rows.all.push_back(prepare(row.row, file_name, options, cache, row.collective));
    row.held_out = std::any_of(rules.begin(), rules.end(), [&](const auto& r) { return r(row.row, i); });
    if (!row.held_out) {
      rows.train.push_back(rows.all.back());
      rows.latencies.insert(rows.all.back().alpha_s);
      rows.bandwidths.insert(rows.all.back().beta_s);
    }
    result.rows.push_back(std::move(row));
  }
  return rows;
}

/// What can be fitted from these rows: --fit, less what they cannot tell apart (with a note); throws
/// when there are fewer rows than parameters plus one.
std::set<std::string> fittable(const CalibrationOptions& options, const PreparedRows& rows, const std::string& file_name,
                               CalibrationResult& result) {
  std::set<std::string> fit = options.fit;
  if (fit.count("latency_factor") != 0 && fit.count("overhead") != 0 && rows.latencies.size() == 1) {
    fit.erase("latency_factor");
    result.notes.push_back(fmt::format(
        "every fitted row has the same latency ({}): the latency factor and the per-step overhead cannot be told "
        "apart, so latency_factor stays 1 and the overhead absorbs the difference; measure at two latencies",
        units::format_time(*rows.latencies.begin())));
  }
  const std::size_t free = fit.size() - (fit.count("segments") != 0 ? 1 : 0);
  if (rows.train.size() < free + 1)
    throw ConfigError(file_name, fmt::format("{} row(s) to fit (after --holdout) for {} parameter(s): need at least {}",
                                             rows.train.size(), free, free + 1));
  return fit;
}

/// The search: per segment candidate, the factors by Nelder-Mead from three starts (bounded), the
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

/// The range of the fitted rows, at the rates and latencies they were predicted with (a row's own, or
/// --bandwidth / --latency).
FittedRange fitted_range(const std::vector<Prepared>& train) {
  FittedRange out;
  for (std::size_t i = 0; i < train.size(); ++i) {
    const auto& p = train[i];
    const double bw = 1 / p.beta_s;
    const int n = p.group.workers;
    if (i == 0) {
      out = FittedRange{p.bytes, p.bytes, bw, bw, p.alpha_s, p.alpha_s, n, n};
      continue;
    }
    out.min_bytes = std::min(out.min_bytes, p.bytes), out.max_bytes = std::max(out.max_bytes, p.bytes);
    out.min_bandwidth_Bps = std::min(out.min_bandwidth_Bps, bw), out.max_bandwidth_Bps = std::max(out.max_bandwidth_Bps, bw);
    out.min_latency_s = std::min(out.min_latency_s, p.alpha_s), out.max_latency_s = std::max(out.max_latency_s, p.alpha_s);
    out.min_ranks = std::min(out.min_ranks, n), out.max_ranks = std::max(out.max_ranks, n);
  }
  return out;
}

/// k-fold cross-validation: fitted row i (in file order) is in fold i mod k; each fold is predicted by
/// the fit of the others, with the same parameters and candidates. Not scored (a note says why) when
/// a fold's complement has too few rows for the parameters.
CrossValidation cross_validate(const std::vector<Prepared>& train, const SoftwareCost& base, const std::set<std::string>& fit,
                               const std::vector<Segments>& candidates, int folds, CalibrationResult& result) {
  CrossValidation cv;
  if (folds == 0) return cv;
  const std::size_t k = static_cast<std::size_t>(folds);
  const std::size_t free = fit.size() - (fit.count("segments") != 0 ? 1 : 0);
  if (train.size() < k || train.size() - (train.size() + k - 1) / k < free + 1) {
    result.notes.push_back(fmt::format("not cross-validated: {} fitted row(s) cannot make {} folds whose complements "
                                       "fit {} parameter(s)",
                                       train.size(), k, free));
    return cv;
  }
  const auto base_sw = std::make_shared<const SoftwareCost>(base);
  std::vector<double> calibrated, preset;
  for (std::size_t f = 0; f < k; ++f) {
    std::vector<Prepared> others;
    for (std::size_t i = 0; i < train.size(); ++i)
      if (i % k != f) others.push_back(train[i]);
    const Fit here = search(others, base, fit, candidates);
    const auto sw = std::make_shared<const SoftwareCost>(fitted_software(here, candidates, base, result.base_preset));
    for (std::size_t i = f; i < train.size(); i += k) {
      calibrated.push_back((here.c + closed_form(train[i], here.lf, here.bf, sw)) / train[i].measured_s - 1);
      preset.push_back(base_time_s(train[i], base_sw) / train[i].measured_s - 1);
    }
  }
  cv.folds = folds;
  cv.calibrated = error_stats(calibrated);
  cv.base = error_stats(preset);
  return cv;
}

}  // namespace

CalibrationResult calibrate(const MeasurementFile& file, const std::string& file_name, const CalibrationOptions& options) {
  for (const auto& p : options.fit)
    if (std::find(calibration_parameters().begin(), calibration_parameters().end(), p) == calibration_parameters().end())
      throw ConfigError("--fit", fmt::format("unknown parameter \"{}\"; valid are: {}", p, join_names(calibration_parameters())));
  if (options.fit.count("segments") != 0 && options.fit.count("latency_factor") != 0)
    throw ConfigError("--fit", "segments and latency_factor both price a message's latency (a handshake is one more "
                               "path latency per segment): fit one of them, e.g. --fit segments,bandwidth_factor,overhead,"
                               "call_cost");
  if (options.folds < 0 || options.folds == 1 || options.folds > 100)
    throw ConfigError("--folds", fmt::format("expected 0 (no cross-validation) or 2 to 100 folds, got {}", options.folds));
  if (file.rows.empty()) throw ConfigError(file_name, "no measurement rows");
  CalibrationResult result;
  result.measurement_format = file.format;
  result.base_preset = pick_base(file, options);
  result.holdout = options.holdout;
  result.select = options.select;
  result.rows_in_file = static_cast<int>(file.rows.size());
  const SoftwareCost base = *models::software_preset(result.base_preset);

  const RowRules holdout = holdout_rules(options);
  PreparedRows rows = prepare_rows(select_rows(file, file_name, options), holdout, file_name, options, result);
  const std::set<std::string> fit = fittable(options, rows, file_name, result);
  result.fitted = fit;
  const auto candidates = segment_candidates(base, fit.count("segments") != 0);
  const Fit best = search(rows.train, base, fit, candidates);

  result.latency_factor = best.lf;
  result.bandwidth_factor = best.bf;
  result.software = fitted_software(best, candidates, base, result.base_preset);
  const auto fitted = std::make_shared<const SoftwareCost>(result.software);
  const auto base_sw = std::make_shared<const SoftwareCost>(base);
  for (std::size_t i = 0; i < rows.all.size(); ++i) {
    auto& row = result.rows[i];
    row.ideal_s = DEFAULT_CALL_S + closed_form(rows.all[i], 1, 1, nullptr);
    row.base_s = base_time_s(rows.all[i], base_sw);
    row.predicted_s = best.c + closed_form(rows.all[i], best.lf, best.bf, fitted);
  }
  result.range = fitted_range(rows.train);
  result.cross_validation = cross_validate(rows.train, base, fit, candidates, options.folds, result);
  return result;
}

}  // namespace ddlsim::analysis
