// ddlsim: what `ddlsim calibrate` reports: the fitted scenario snippet (network.calibration) and
// the table of the fit, its rows and their errors (analysis/calibration.hpp).
#include "analysis/calibration.hpp"

#include "models/json_input.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::analysis {

namespace {

using models::Rendezvous;
using models::SoftwareCost;

/// The segment behaviour of a software cost, one phrase (the table's "segments" row).
std::string describe(const SoftwareCost& c) {
  switch (c.rendezvous) {
    case Rendezvous::NONE: return "no handshake";
    case Rendezvous::MESSAGE:
      return c.eager_limit_bytes > 0 ? fmt::format("a handshake per message above {}", units::format_bytes(c.eager_limit_bytes))
                                     : "a handshake per message";
    case Rendezvous::SEGMENT:
      return fmt::format("segments of {}, {} in flight", units::format_bytes(c.segment_bytes), c.segments_in_flight);
    case Rendezvous::CREDIT:
      return fmt::format("slots of {}, {} credits posted ahead", units::format_bytes(c.segment_bytes),
                         c.segments_in_flight);
  }
  return "?";
}

json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows},         {"median_abs_error", s.median_abs}, {"max_abs_error", s.max_abs},
          {"mean_error", s.mean},   {"too_fast", s.too_fast},           {"too_slow", s.too_slow}};
}

struct Split {
  std::vector<double> fit, held_out;
};

/// Errors of one model (`which`: 0 ideal, 1 base, 2 calibrated) over rows selected by `keep`.
Split errors_of(const CalibrationResult& r, int which, const std::function<bool(const CalibratedRow&)>& keep) {
  Split s;
  for (const auto& row : r.rows) {
    if (!keep(row)) continue;
    const double p = which == 0 ? row.ideal_s : which == 1 ? row.base_s : row.predicted_s;
    (row.held_out ? s.held_out : s.fit).push_back(p / row.row.seconds - 1);
  }
  return s;
}

std::vector<std::pair<std::string, std::string>> op_groups(const CalibrationResult& r) {
  std::vector<std::pair<std::string, std::string>> groups;
  for (const auto& row : r.rows) {
    const std::pair key{row.row.op, row.row.algorithm};
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
  }
  return groups;
}

std::string model_label(const CalibrationResult& r, int which) {
  return which == 0 ? "ideal (alpha-beta)" : which == 1 ? r.base_preset + " preset, uncalibrated" : "calibrated";
}

std::string pct(double v) { return fmt::format("{:+.1f}%", 100 * v); }
std::string apct(double v) { return fmt::format("{:.1f}%", 100 * v); }

std::string stats_cells(const ErrorStats& s) {
  if (s.rows == 0) return fmt::format("{:>5} {:>8} {:>8} {:>8}", 0, "-", "-", "-");
  return fmt::format("{:>5} {:>8} {:>8} {:>8}", s.rows, apct(s.median_abs), apct(s.max_abs), pct(s.mean));
}

}  // namespace

json calibration_snippet(const CalibrationResult& r, const std::string& file_name, const std::string& command) {
  json network{{"model", "calibrated"},
               {"latency_factor", r.latency_factor},
               {"bandwidth_factor", r.bandwidth_factor},
               {"software", models::to_scenario_json(r.software)},
               {"collective_call_cost", r.software.call_cost_s.value_or(0)}};
  json errors = json::object();
  const char* keys[] = {"ideal", "base", "calibrated"};
  for (int which = 0; which < 3; ++which) {
    const auto s = errors_of(r, which, [](const CalibratedRow&) { return true; });
    errors[keys[which]] = {{"fit", stats_json(error_stats(s.fit))}, {"held_out", stats_json(error_stats(s.held_out))}};
  }
  json per_op = json::array();
  for (const auto& [op, algorithm] : op_groups(r)) {
    const auto s = errors_of(r, 2, [&](const CalibratedRow& row) { return row.row.op == op && row.row.algorithm == algorithm; });
    per_op.push_back({{"op", op},
                      {"algorithm", algorithm},
                      {"fit", stats_json(error_stats(s.fit))},
                      {"held_out", stats_json(error_stats(s.held_out))}});
  }
  json rows = json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"line", row.row.line},
                    {"op", row.row.op},
                    {"algorithm", row.row.algorithm},
                    {"collective", row.collective},
                    {"ranks", row.row.ranks},
                    {"servers", row.row.servers},
                    {"bytes", row.row.bytes},
                    {"measured_s", row.row.seconds},
                    {"held_out", row.held_out},
                    {"ideal_s", row.ideal_s},
                    {"base_s", row.base_s},
                    {"predicted_s", row.predicted_s}});
  std::vector<std::string> fitted(r.fitted.begin(), r.fitted.end());
  json cross_validation{{"folds", r.cross_validation.folds}};
  if (r.cross_validation.folds > 0) {
    cross_validation["calibrated"] = stats_json(r.cross_validation.calibrated);
    cross_validation["base"] = stats_json(r.cross_validation.base);
  }
  const auto& g = r.range;
  json range{{"bytes", {g.min_bytes, g.max_bytes}},
             {"bandwidth_bps", {8 * g.min_bandwidth_Bps, 8 * g.max_bandwidth_Bps}},
             {"latency_s", {g.min_latency_s, g.max_latency_s}},
             {"ranks", {g.min_ranks, g.max_ranks}}};
  json fit{{"command", command},
           {"measurements", file_name},
           {"format", r.measurement_format},
           {"base_software", r.base_preset},
           {"fitted", fitted},
           {"holdout", r.holdout},
           {"select", r.select},
           {"notes", r.notes},
           {"errors", errors},
           {"cross_validation", cross_validation},
           {"range", range},
           {"per_op", per_op},
           {"rows", rows}};
  return {{"format", "ddlsim-calibration"}, {"version", 1}, {"network", network}, {"fit", fit}};
}

std::string format_calibration(const CalibrationResult& r, const std::string& file_name, bool show_rows) {
  std::string out;
  int held = 0;
  for (const auto& row : r.rows) held += row.held_out ? 1 : 0;
  out += fmt::format("calibration of {} ({}, {} rows{}: {} fitted, {} held out{})\n", file_name, r.measurement_format,
                     r.rows.size(),
                     r.select.empty() ? "" : fmt::format(" of {} selected by {}", r.rows_in_file, fmt::join(r.select, " and ")),
                     static_cast<int>(r.rows.size()) - held, held,
                     r.holdout.empty() ? "" : fmt::format(" by {}", fmt::join(r.holdout, " or ")));
  const auto& sw = r.software;
  auto mark = [&r](const char* p) { return r.fitted.count(p) != 0 ? "fitted" : "fixed"; };
  out += fmt::format("  {:<22} {:<34} {}\n", "latency_factor", fmt::format("{:.4g}", r.latency_factor), mark("latency_factor"));
  out += fmt::format("  {:<22} {:<34} {}\n", "bandwidth_factor", fmt::format("{:.4g}", r.bandwidth_factor), mark("bandwidth_factor"));
  out += fmt::format("  {:<22} {:<34} {}\n", "overhead per step",
                     fmt::format("{} (send {} + receive {})", units::format_time(sw.send_overhead_s + sw.recv_overhead_s),
                                 units::format_time(sw.send_overhead_s), units::format_time(sw.recv_overhead_s)),
                     mark("overhead"));
  out += fmt::format("  {:<22} {:<34} {}\n", "call cost", units::format_time(sw.call_cost_s.value_or(0)), mark("call_cost"));
  out += fmt::format("  {:<22} {:<34} {}\n", "segments", describe(sw), mark("segments"));
  out += fmt::format("  {:<22} {:<34} {}\n", "protocol_efficiency", fmt::format("{:.4g}", sw.protocol_efficiency),
                     fmt::format("the {} preset's", r.base_preset));
  for (const auto& note : r.notes) out += fmt::format("  note: {}\n", note);

  out += fmt::format("\nerror = predicted / measured - 1 (median and max of |error|, mean signed: + is too slow)\n");
  out += fmt::format("{:<32} {:>5} {:>8} {:>8} {:>8}   {:>5} {:>8} {:>8} {:>8}\n", "model", "fit", "median", "max",
                     "mean", "held", "median", "max", "mean");
  for (int which = 0; which < 3; ++which) {
    if (which == 1 && r.base_preset == "ideal") continue;  // the same as the first
    const auto s = errors_of(r, which, [](const CalibratedRow&) { return true; });
    out += fmt::format("{:<32} {}   {}\n", model_label(r, which), stats_cells(error_stats(s.fit)),
                       stats_cells(error_stats(s.held_out)));
  }
  const auto& cv = r.cross_validation;
  if (cv.folds > 0)
    out += fmt::format("{}-fold cross-validation of the fitted rows (each predicted by the fit of the others): "
                       "calibrated median {} max {}; the {} preset on the same rows: median {} max {}{}\n",
                       cv.folds, apct(cv.calibrated.median_abs), apct(cv.calibrated.max_abs), r.base_preset,
                       apct(cv.base.median_abs), apct(cv.base.max_abs),
                       cv.worse_than_base() ? " -- worse than the preset out of sample" : "");
  const auto& g = r.range;
  out += fmt::format("fitted on {} to {}, {} to {}, latency {} to {}, {} to {} ranks\n", units::format_bytes(g.min_bytes),
                     units::format_bytes(g.max_bytes), units::format_bandwidth(g.min_bandwidth_Bps),
                     units::format_bandwidth(g.max_bandwidth_Bps), units::format_time(g.min_latency_s),
                     units::format_time(g.max_latency_s), g.min_ranks, g.max_ranks);
  out += fmt::format("\nresiduals of the calibrated model per op\n");
  out += fmt::format("{:<32} {:>5} {:>8} {:>8} {:>8}   {:>5} {:>8} {:>8} {:>8}\n", "op / algorithm", "fit", "median",
                     "max", "mean", "held", "median", "max", "mean");
  for (const auto& [op, algorithm] : op_groups(r)) {
    const auto s = errors_of(r, 2, [&](const CalibratedRow& row) { return row.row.op == op && row.row.algorithm == algorithm; });
    out += fmt::format("{:<32} {}   {}\n", op + " / " + algorithm, stats_cells(error_stats(s.fit)),
                       stats_cells(error_stats(s.held_out)));
  }
  if (show_rows) {
    out += fmt::format("\n{:>5} {:<26} {:>5} {:>10} {:>11} {:>11} {:>8} {:>8}\n", "line", "op / algorithm", "N+S",
                       "bytes", "measured", "predicted", "error", "");
    for (const auto& row : r.rows) {
      const auto& m = row.row;
      out += fmt::format("{:>5} {:<26} {:>5} {:>10} {:>11} {:>11} {:>8} {:>8}\n", m.line, m.op + " / " + m.algorithm,
                         m.servers > 0 ? fmt::format("{}+{}", m.ranks, m.servers) : std::to_string(m.ranks),
                         units::format_bytes(m.bytes), units::format_time(m.seconds),
                         units::format_time(row.predicted_s), pct(row.predicted_s / m.seconds - 1),
                         row.held_out ? "held" : "");
    }
  }
  return out;
}

}  // namespace ddlsim::analysis
