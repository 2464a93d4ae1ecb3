// ddlsim: the results table `ddlsim run` prints (analysis/summary.hpp: format_table).
#include "analysis/summary.hpp"
#include "analysis/summary_parts.hpp"

#include "analysis/events.hpp"
#include "analysis/scaling.hpp"

#include "models/compressor.hpp"
#include "models/logical_graph.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::analysis {

std::string format_table(const sim::Scenario& sc, const sim::SimulationResult& result, const Summary& s) {
  std::string out;
  const std::string aggregation =
      sc.training.sync_model->traits().uses_servers
          ? fmt::format("{} on {} parameter server{}", sc.training.sync.name, sc.platform.parameter_servers,
                        sc.platform.parameter_servers > 1 ? "s" : "")
      : sc.training.sync_model->traits().uses_collective
          ? fmt::format("{} + {} all-reduce", sc.training.sync.name, sc.training.collective.name)
          : fmt::format("{} on a logical {} graph", sc.training.sync.name,
                        sc.training.graph ? sc.training.graph->kind() : std::string("?"));
  const bool analytic = sc.network.fidelity == sim::Fidelity::ANALYTIC;
  out += fmt::format("scenario {}: {} workers, {} topology ({} routing), {}, {} fidelity ({}), network model {}\n",
                     sc.name, s.workers, sc.platform.topology, platforms::to_string(sc.platform.routing), aggregation,
                     sim::to_string(sc.network.fidelity),
                     !analytic ? sim::to_string(sc.network.granularity)
                     : sc.training.sync_model->traits().uses_servers ? "pushes and pulls run as flows"
                     : sc.training.graph                       ? "point-to-point messages run as flows"
                                                               : "closed form",
                     sim::to_string(sc.network.model));
  auto row = [&out](const std::string& k, const std::string& v) { out += fmt::format("  {:<32} {}\n", k, v); };
  const bool global = sc.training.sync_model->traits().synchronous;
  row(global ? "iteration_time_s (global step)" : "iteration_time_s (mean)",
      fmt::format("{:.6g}  (median {:.6g}, p95 {:.6g}{})", s.iteration_time_s, s.iteration_time_median_s,
                  s.iteration_time_p95_s,
                  global ? fmt::format("; per worker {:.6g}", s.worker_iteration_time_s) : std::string()));
  row("  compute_s", fmt::format("{:.6g}", s.compute_time_s));
  if (const auto line = compute_line(sc); !line.empty()) row("    compute settings", line);
  row("  exposed_comm_s", fmt::format("{:.6g}  (of {:.6g} s communication, overlap {:.1f}%)", s.exposed_comm_time_s,
                                      s.comm_time_s, 100 * s.overlap_fraction));
  row("  straggler_wait_s", fmt::format("{:.6g}", s.straggler_wait_s));
  const auto rate = [](double v, const std::string& text) {
    return std::isnan(v) ? std::string("undefined (the iteration takes no time: no compute, no communication)") : text;
  };
  row("throughput_samples_per_s", rate(s.throughput_samples_per_s, fmt::format("{:.6g}", s.throughput_samples_per_s)));
  if (sc.workload.worker.samples != sc.workload.batch_size)
    row("  samples_per_worker_iteration", fmt::format("{} (batch_size {}, sync_settings in summary.json)",
                                                      sc.workload.worker.samples, sc.workload.batch_size));
  row("updates_per_s", rate(s.updates_per_s, fmt::format("{:.6g}", s.updates_per_s)));
  row("speedup", std::isnan(s.speedup) ? std::string("undefined (the profile has no single-worker compute time)")
                                       : fmt::format("{:.4g} (of {} workers)", s.speedup, s.workers));
  row("scaling_efficiency", std::isnan(s.scaling_efficiency) ? std::string("undefined") : fmt::format("{:.4g}", s.scaling_efficiency));
  // Only models that send the gradient buckets say how many there are (gossip and the event models send models
  // and tensors, not buckets).
  const bool buckets = sc.training.sync_model->traits().uses_collective || sc.training.sync_model->traits().uses_servers;
  row("comm_bytes_per_iteration",
      buckets ? fmt::format("{:.6g} ({}, {} buckets)", s.comm_bytes_per_iteration,
                            units::format_bytes(s.comm_bytes_per_iteration), result.buckets)
              : fmt::format("{:.6g} ({})", s.comm_bytes_per_iteration, units::format_bytes(s.comm_bytes_per_iteration)));
  row("messages_per_iteration", fmt::format("{:.6g}", s.messages_per_iteration));
  for (const auto& c : result.collective_choices)
    row(fmt::format("{} for {} buckets", sc.training.collective.name, units::format_bytes(c.bucket_bytes)),
        fmt::format("{} ({:.6g} s, {})", c.algorithm, c.estimated_s, c.basis));
  if (sc.training.sync_model->traits().uses_servers && s.staleness_wait_s > 0)
    row("  staleness_wait_s", fmt::format("{:.6g}  (pulls held by the staleness bound)", s.staleness_wait_s));
  if (s.staleness.count > 0)
    row("staleness (updates)", fmt::format("mean {:.3g}, p95 {:.3g}, max {:.0f}", s.staleness.mean, s.staleness.p95,
                                           s.staleness.max));
  if (sc.training.compressor.name != "none") {
    const auto c = detail::compression_json(sc, result);
    // Both ratios, named: the compressor's k/n (its "ratio" param, for sparsifiers) and wire / dense bytes.
    const auto settings = sc.training.compressor_model->settings();
    const std::string kn = settings.contains("ratio") && settings["ratio"].is_number()
                               ? fmt::format("k/n {:.4g}, ", settings["ratio"].get<double>())
                               : std::string();
    row("compression", fmt::format("{}: {} of {} per worker and iteration ({}wire/dense {:.4g}), encode {:.3g} s, "
                                   "decode {:.3g} s",
                                   sc.training.compressor.name,
                                   units::format_bytes(c["wire_bytes_per_worker_iteration"].get<double>()),
                                   units::format_bytes(c["dense_bytes_per_worker_iteration"].get<double>()), kn,
                                   c["compression_ratio"].get<double>(), c["encode_time_per_iteration_s"].get<double>(),
                                   c["decode_time_per_iteration_s"].get<double>()));
  }
  if (sc.training.adaptive.enabled) {
    const auto a = detail::adaptive_json(sc, result, s);
    std::string reasons;
    for (const auto& e : a["explorations"]) reasons += (reasons.empty() ? "" : ", ") + e["reason"].get<std::string>();
    std::string ratios;
    for (const auto& r : a["iterations_per_ratio"])
      ratios += fmt::format("{}{:g} x{}", ratios.empty() ? "" : ", ", r["ratio"].get<double>(), r["iterations"].get<int>());
    row("adaptive compression", fmt::format("{} exploration{} ({}), {} iterations exploring; ratios run: {}",
                                            a["explorations"].size(), a["explorations"].size() == 1 ? "" : "s", reasons,
                                            a["exploration_iterations"].get<int>(), ratios));
  }
  if (const auto line = events_line(sc, result); !line.empty()) row("events", line);
  if (s.neighbour_staleness.count > 0)
    row("neighbour staleness (iterations)", fmt::format("mean {:.3g}, p95 {:.3g}, max {:.0f}", s.neighbour_staleness.mean,
                                                        s.neighbour_staleness.p95, s.neighbour_staleness.max));
  if (sc.training.graph)
    row("spectral_gap", s.spectral_gap ? fmt::format("{:.6g}  ({})", *s.spectral_gap, s.spectral_gap_basis)
                                       : fmt::format("not computed ({})", s.spectral_gap_basis));
  return out;
}

}  // namespace ddlsim::analysis
