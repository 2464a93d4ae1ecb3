#include "analysis/summary.hpp"

#include "models/units.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>

namespace ddlsim::analysis {
namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Linear interpolation between closest ranks (numpy's default).
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void write_file_atomically(const std::filesystem::path& file, const std::string& content) {
  auto tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write \"{}\"", tmp.string()));
    out << content;
    if (!out.flush()) throw std::runtime_error(fmt::format("cannot write \"{}\"", tmp.string()));
  }
  std::filesystem::rename(tmp, file);
}

}  // namespace

Summary summarize(const sim::Scenario& scenario, const sim::SimulationResult& result) {
  Summary s;
  s.workers = scenario.platform.workers;
  s.iterations = scenario.workload.iterations;
  std::vector<double> durations;
  double compute = 0, comm = 0, bytes = result.bytes_sent_by_servers;
  double messages = static_cast<double>(result.messages_sent_by_servers);
  for (const auto& w : result.workers) {
    for (const auto& it : w.iterations) {
      durations.push_back(it.end_s - it.start_s);
      compute += it.compute_s;
      comm += it.communication_s;
    }
    bytes += w.bytes_sent;
    messages += static_cast<double>(w.messages_sent);
  }
  const double count = static_cast<double>(durations.size());
  double total = 0;
  for (double d : durations) total += d;
  s.iteration_time_s = count > 0 ? total / count : 0;
  s.iteration_time_median_s = quantile(durations, 0.5);
  s.iteration_time_p95_s = quantile(durations, 0.95);
  s.compute_time_s = count > 0 ? compute / count : 0;
  s.communication_time_s = count > 0 ? comm / count : 0;
  const double batch = static_cast<double>(scenario.workload.batch_size);
  s.throughput_samples_per_s = s.iteration_time_s > 0 ? s.workers * batch / s.iteration_time_s : 0;
  s.single_worker_iteration_time_s = scenario.workload.profile.iteration_compute_s();
  s.speedup = s.single_worker_iteration_time_s > 0 && s.iteration_time_s > 0
                  ? s.throughput_samples_per_s / (batch / s.single_worker_iteration_time_s)
                  : 0;
  s.scaling_efficiency = s.speedup / s.workers;
  s.comm_bytes_per_iteration = bytes / s.iterations;
  s.messages_per_iteration = messages / s.iterations;
  s.makespan_s = result.makespan_s;
  return s;
}

nlohmann::json to_json(const sim::Scenario& sc, const sim::SimulationResult& result, const Summary& s) {
  nlohmann::json j;
  j["scenario"] = sc.name;
  j["ddlsim_version"] = DDLSIM_VERSION;
  j["seed"] = sc.seed;
  j["topology"] = sc.platform.topology;
  j["workers"] = s.workers;
  j["parameter_servers"] = sc.platform.parameter_servers;
  j["sync_model"] = sc.training.sync.name;
  j["collective"] = sc.training.collective.name;
  j["compressor"] = sc.training.compressor.name;
  j["fidelity"] = sim::to_string(sc.network.fidelity);
  j["network_model"] = sim::to_string(sc.network.model);
  j["collective_granularity"] =
      sc.network.fidelity == sim::Fidelity::ANALYTIC ? "closed_form" : sim::to_string(sc.network.granularity);
  j["iterations"] = s.iterations;
  j["batch_size_per_worker"] = sc.workload.batch_size;
  j["iteration_time_s"] = s.iteration_time_s;
  j["iteration_time_median_s"] = s.iteration_time_median_s;
  j["iteration_time_p95_s"] = s.iteration_time_p95_s;
  j["compute_time_per_iteration_s"] = s.compute_time_s;
  j["exposed_comm_time_per_iteration_s"] = s.communication_time_s;
  j["throughput_samples_per_s"] = s.throughput_samples_per_s;
  j["single_worker_iteration_time_s"] = s.single_worker_iteration_time_s;
  j["speedup"] = s.speedup;
  j["scaling_efficiency"] = s.scaling_efficiency;
  j["comm_bytes_per_iteration"] = s.comm_bytes_per_iteration;
  j["messages_per_iteration"] = s.messages_per_iteration;
  j["gradient_bytes"] = sc.workload.profile.grad_bytes();
  j["makespan_s"] = s.makespan_s;
  j["analytic_alpha_s"] = result.alpha_s;
  j["analytic_beta_s_per_byte"] = result.beta_s_per_byte;
  return j;
}

void write_outputs(const std::string& dir, const nlohmann::json& summary_json) {
  std::filesystem::create_directories(dir);
  write_file_atomically(std::filesystem::path(dir) / "summary.json", summary_json.dump(2) + "\n");
}

std::string format_table(const sim::Scenario& sc, const sim::SimulationResult&, const Summary& s) {
  std::string out;
  out += fmt::format("scenario {}: {} workers, {} topology, {} + {}, {} fidelity ({}), network model {}\n", sc.name,
                     s.workers, sc.platform.topology, sc.training.sync.name, sc.training.collective.name,
                     sim::to_string(sc.network.fidelity),
                     sc.network.fidelity == sim::Fidelity::ANALYTIC ? "closed form"
                                                                    : sim::to_string(sc.network.granularity),
                     sim::to_string(sc.network.model));
  auto row = [&out](const std::string& k, const std::string& v) { out += fmt::format("  {:<28} {}\n", k, v); };
  row("iteration_time_s", fmt::format("{:.6g}", s.iteration_time_s));
  row("  compute_s", fmt::format("{:.6g}", s.compute_time_s));
  row("  exposed_comm_s", fmt::format("{:.6g}", s.communication_time_s));
  row("throughput_samples_per_s", fmt::format("{:.6g}", s.throughput_samples_per_s));
  row("speedup", fmt::format("{:.4g} (of {} workers)", s.speedup, s.workers));
  row("scaling_efficiency", fmt::format("{:.4g}", s.scaling_efficiency));
  row("comm_bytes_per_iteration", fmt::format("{:.6g} ({})", s.comm_bytes_per_iteration,
                                               units::format_bytes(s.comm_bytes_per_iteration)));
  row("messages_per_iteration", fmt::format("{:.6g}", s.messages_per_iteration));
  return out;
}

}  // namespace ddlsim::analysis
