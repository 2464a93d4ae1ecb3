// ddlsim: the `ddlsim collectives` table and CSV (engine/collective_compare.hpp, format_compare).
#include "engine/collective_compare.hpp"

#include "models/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

namespace ddlsim::sim {

std::string format_compare(const CompareRequest& req, const std::vector<CompareRow>& rows, bool csv) {
  std::string out;
  if (csv) {
    out += "algorithm,operation,resolved,analytic_time_s,simulated_time_s,algbw_GBps,busbw_GBps,fastest,flows\n";
    for (const auto& r : rows)
      if (r.applicable)
        out += fmt::format("{},{},{},{:.9g},{},{:.6g},{:.6g},{},{}\n", r.algorithm, r.operation, r.resolved,
                           r.analytic_s, r.simulated_s >= 0 ? fmt::format("{:.9g}", r.simulated_s) : std::string(),
                           r.algbw_GBps, r.busbw_GBps, r.fastest ? 1 : 0, r.flows);
    return out;
  }
  // Servers are on the platform only when a PS algorithm ran; its note names where they hang off.
  const auto ps_row =
      std::find_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.uses_servers && r.applicable; });
  const double server_bw = req.server_bandwidth_Bps > 0 ? req.server_bandwidth_Bps : req.link.bandwidth_Bps;
  out += fmt::format("{} workers{}, {} per rank, {} topology ({} routing), links {} / {}, {}\n", req.workers,
                     ps_row != rows.end()
                         ? fmt::format(" + {} server{} ({} link each, {})", req.servers, req.servers > 1 ? "s" : "",
                                       units::format_bandwidth(server_bw), ps_row->note)
                         : "",
                     units::format_bytes(req.bytes), req.topology,
                     platforms::to_string(req.routing.value_or(platforms::default_routing(req.topology))),
                     units::format_bandwidth(req.link.bandwidth_Bps),
                     units::format_time(req.link.latency_s),
                     req.simulate ? fmt::format("flow fidelity ({}, {} network)", to_string(req.network.granularity),
                                                to_string(req.network.model))
                                  : "analytic fidelity (closed forms only)");
  out += fmt::format("{:<22} {:<15} {:>14} {:>14} {:>11} {:>11}\n", "algorithm", "operation", "analytic_s",
                     "simulated_s", "algbw_GBps", "busbw_GBps");
  for (const auto& r : rows) {
    std::string name = r.resolved.empty() ? r.algorithm : fmt::format("{} ({})", r.algorithm, r.resolved);
    if (!r.applicable) {
      out += fmt::format("{:<22} {:<15} {:>14} {:>14} {:>11} {:>11}  not run: {}\n", name, r.operation, "-", "-", "-",
                         "-", r.note);
      continue;
    }
    out += fmt::format("{:<22} {:<15} {:>14.6g} {:>14} {:>11.4g} {:>11.4g}{}\n", name, r.operation, r.analytic_s,
                       r.simulated_s >= 0 ? fmt::format("{:.6g}", r.simulated_s) : std::string("-"), r.algbw_GBps,
                       r.busbw_GBps, r.fastest ? "  * fastest" : "");
  }
  std::vector<std::string> replayed;
  for (const auto& r : rows)
    if (r.replayed) replayed.push_back(r.algorithm);
  if (!replayed.empty())
    out += fmt::format("replayed without SimGrid's actors, no two transfers sharing a link (--solver simgrid runs "
                       "them in SimGrid, the same times): {}\n",
                       fmt::join(replayed, ", "));
  return out;
}

}  // namespace ddlsim::sim
