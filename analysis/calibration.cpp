#include "analysis/calibration.hpp"

#include "analysis/calibration_fit.hpp"

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

using models::SoftwareCost;
using namespace calibration_fit;


// ---- preparing rows ----

std::string pick_base(const MeasurementFile& file, const CalibrationOptions& options) {
  if (!options.base_software.empty()) {
    const auto base = models::software_preset(options.base_software);
    if (!base)
      throw ConfigError("--software", fmt::format("unknown software preset \"{}\"; valid presets are: {}",
                                                  options.base_software, models::software_preset_names()));
    if (!base->protocols.empty())
      throw ConfigError("--software", fmt::format("\"{}\" picks a protocol per call; calibrate one protocol at a time "
                                                  "(nccl_ll, nccl_ll128 or nccl_simple)",
                                                  options.base_software));
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
    if (it != options.library.end()) name = it->second;
    else if (m.op == "allreduce") name = m.backend == "gloo" ? "gloo_ring" : "ring";
    else throw ConfigError(where, fmt::format("no ddlsim collective models the library's {} (--library)", m.op));
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
