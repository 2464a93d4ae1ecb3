// ddlsim: `ddlsim calibrate` -- fitting the network and software parameters to measured
// collective timings (docs/validation.md, "Calibration").
//
// Every measured row (analysis/measurements.hpp) is predicted by its algorithm's closed form on the
// reference star (models/collective.hpp) with alpha = the row's one-way latency x latency_factor,
// beta = 1 / (the row's rate x bandwidth_factor) and the software costs of a base preset
// (models/software_cost.hpp) whose per-step overhead o (split evenly into send and receive) and
// segment behaviour are free, plus a fixed cost c per collective call:
//
//   predicted = c + closed_form(N, S, M; alpha x lf, beta / bf, software(o, segments))
//
// The fit minimises the sum of squared relative errors (predicted / measured - 1)^2 over the rows
// not held out, plus a weak prior toward the base preset (PRIOR_WEIGHT: a tie-breaker along the
// directions the rows cannot tell apart, negligible against any row's error). The parameters keep
// their physical bounds: latency_factor >= 1 (no path is faster than its links' latency),
// bandwidth_factor <= 1 (no flow beats the wire), overhead and call cost >= 0; and one effect has
// one knob: the handshake's segments and the latency factor both price latency, so they are never
// fitted together (segments are fitted only when asked, with latency_factor fixed). The fit is
// scored out of sample by k-fold cross-validation on the fitted rows (folds), beside the base
// preset on the same rows; `calibrate --out` refuses to write a calibration that scores worse than
// the preset (app/calibrate_command.cpp). Every closed form is a sum of steps and o is paid once
// per step, so the prediction is linear in (o, c): for each candidate segment behaviour and each
// (lf, bf) those two are solved exactly (non-negative least squares in two unknowns, with the
// prior's ridge); (ln lf, ln bf) are searched by Nelder-Mead from twelve fixed starts, each
// restarted while it improves; the candidate with the least error wins (the base preset's own on
// ties).
// Deterministic: the same file and options give the same bytes.
#pragma once

#include "analysis/measurements.hpp"
#include "models/software_cost.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::analysis {

/// The parameters `--fit` may name.
const std::vector<std::string>& calibration_parameters();  // latency_factor, bandwidth_factor, overhead, call_cost, segments

struct CalibrationOptions {
  /// The software preset the fit starts from (and whose protocol efficiency it keeps); empty: gloo
  /// when every row's backend is gloo (or unknown), nccl_simple when it is nccl.
  std::string base_software;
  /// One knob per effect: "segments" (the handshake's) is fitted only when named, and never with
  /// latency_factor.
  std::set<std::string> fit{"latency_factor", "bandwidth_factor", "overhead", "call_cost"};
  /// k-fold cross-validation of the fitted rows (row i of them in fold i mod k); 0: none.
  int folds = 5;
  /// op -> the ddlsim collective that models the library's own (algorithm "library"). Without an
  /// "allreduce" entry, a gloo row's all-reduce is gloo_ring (gloo's own ring: its segments and
  /// notices) and any other backend's is ring (library_collective()).
  std::map<std::string, std::string> library{{"allgather", "ring_allgather"},
                                             {"broadcast", "binomial_broadcast"},
                                             {"reduce_scatter", "ring_reduce_scatter"}};
  /// For rows whose file gives no rate / latency (nccl-tests, torchrun runs).
  std::optional<double> bandwidth_Bps;
  std::optional<double> latency_s;
  /// Held-out rows: "COLUMN=V1,V2" (op, algorithm, ranks, servers, bytes, backend, bandwidth_bps,
  /// latency_s, source; units allowed for bytes, rates and times) or "every=K" (every K-th row).
  /// A row matching any spec is held out.
  std::vector<std::string> holdout;
  /// Only these rows are used at all: each spec as for holdout (except every=K), a row must match
  /// every spec. Calibrate one algorithm at a time: a scenario runs one collective, and the
  /// handshakes of real libraries cost each algorithm differently (docs/validation.md).
  std::vector<std::string> select;
};

/// One model's predictions scored against the measurements.
struct ErrorStats {
  int rows = 0;
  double median_abs = 0;  // of |predicted / measured - 1|
  double max_abs = 0;
  double mean = 0;        // signed: > 0 too slow (pessimistic), < 0 too fast
  int too_fast = 0, too_slow = 0;
};

struct CalibratedRow {
  Measurement row;
  std::string collective;  // the ddlsim algorithm that predicts it
  bool held_out = false;
  double ideal_s = 0;      // alpha-beta with the default call cost (what an uncalibrated scenario predicts)
  double base_s = 0;       // the base software preset, uncalibrated
  double predicted_s = 0;  // calibrated
};

/// The k-fold cross-validation: every fitted row predicted by the fit of the other folds.
struct CrossValidation {
  int folds = 0;            // 0: not scored (why in the notes)
  ErrorStats calibrated;    // out of sample
  ErrorStats base;          // the base preset on the same rows
  /// True when the calibration predicts unseen rows worse than the preset it started from (median |error|).
  [[nodiscard]] bool worse_than_base() const {
    return folds > 0 && calibrated.median_abs > base.median_abs * (1 + 1e-9) + 1e-12;
  }
};

/// The sizes, rates, latencies and rank counts of the fitted rows: outside them a calibration extrapolates.
struct FittedRange {
  double min_bytes = 0, max_bytes = 0;
  double min_bandwidth_Bps = 0, max_bandwidth_Bps = 0;
  double min_latency_s = 0, max_latency_s = 0;
  int min_ranks = 0, max_ranks = 0;
};

struct CalibrationResult {
  double latency_factor = 1;
  double bandwidth_factor = 1;
  models::SoftwareCost software;  // the fitted software (call_cost_s set)
  std::string base_preset;
  std::string measurement_format;
  std::vector<CalibratedRow> rows;
  std::vector<std::string> notes;  // what could not be fitted, and why
  std::set<std::string> fitted;    // the parameters actually fitted
  std::vector<std::string> holdout;
  std::vector<std::string> select;
  int rows_in_file = 0;
  CrossValidation cross_validation;
  FittedRange range;
};

/// Throws ConfigError (path "FILE:LINE" for a row, or the option's name) on bad input.
CalibrationResult calibrate(const MeasurementFile& file, const std::string& file_name, const CalibrationOptions& options);

ErrorStats error_stats(const std::vector<double>& errors);

/// The snippet a scenario loads with "network": {"calibration": FILE}:
///   {"format": "ddlsim-calibration", "version": 1, "network": {model, latency_factor, bandwidth_factor,
///    software, collective_call_cost}, "fit": {the report: inputs, errors per model and per op}}.
nlohmann::json calibration_snippet(const CalibrationResult& result, const std::string& file_name,
                                   const std::string& command);

/// The human-readable report: the fit, the errors of each model on the fitted and held-out rows, the
/// residuals per (op, algorithm), and with `rows` every row.
std::string format_calibration(const CalibrationResult& result, const std::string& file_name, bool rows);

}  // namespace ddlsim::analysis
