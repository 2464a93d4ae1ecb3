// ddlsim: summary.json (analysis/summary.hpp: to_json).
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
namespace detail {

nlohmann::json compression_json(const sim::Scenario& sc, const sim::SimulationResult& result) {
  const auto& comp = *sc.training.compressor_model;
  const auto& adaptive = sc.training.adaptive;
  double dense = 0, wire = 0, encode = 0, decode = 0;
  for (double bytes : result.bucket_bytes) dense += bytes;
  // Under adaptive compression, each iteration ran one candidate: the mean over the iterations.
  const auto& runs = result.totals.iterations_per_variant;
  const double iterations = adaptive.enabled ? result.totals.iterations : 1;
  for (const auto& [v, count] : adaptive.enabled ? runs : std::map<int, int>{{-1, 1}}) {
    const auto& c = v < 0 ? comp : *adaptive.candidates.at(static_cast<std::size_t>(v));
    for (double bytes : result.bucket_bytes) wire += c.encode(bytes).wire_bytes * count / iterations;
  }
  for (std::size_t b = 0; b < result.compression.size(); ++b) {  // the static compressor (unused when adaptive)
    encode += result.compression[b].encode_s;
    decode += result.compression[b].decode_s;
  }
  if (adaptive.enabled) {  // measured: every iteration's encode and decode, split by the cost terms' shares
    double codec = 0, count = 0;
    for (const auto& w : result.totals.workers) {
      codec += w.codec_s;
      count += static_cast<double>(w.iterations);
    }
    const double share = encode + decode > 0 ? encode / (encode + decode) : 1.0;
    encode = count > 0 ? share * codec / count : 0;
    decode = count > 0 ? (1 - share) * codec / count : 0;
  }
  const auto aggregation = comp.aggregation();
  auto settings = comp.settings();
  if (adaptive.enabled) settings["ratio"] = "adaptive (adaptive_compression)";
  return {{"compressor", sc.training.compressor.name},
          {"settings", settings},
          {"aggregation", sc.training.sync_model->traits().uses_servers ? std::string("push") : models::to_string(aggregation)},
          {"index_encoding", comp.index_encoding()},
          {"dense_bytes_per_worker_iteration", dense},
          {"wire_bytes_per_worker_iteration", wire},
          {"compression_ratio", dense > 0 ? wire / dense : 0.0},
          {"encode_time_per_iteration_s", encode},
          {"decode_time_per_iteration_s", decode},
          {"error_feedback", comp.error_feedback()},
          {"error_feedback_memory_bytes", comp.state_buffers() * dense},
          {"cost_device", sc.training.compression_cost.device}};
}

/// What adaptive compression explored, chose and saw of the network.
nlohmann::json adaptive_json(const sim::Scenario& sc, const sim::SimulationResult& result, const Summary& s) {
  const auto& a = sc.training.adaptive;
  const auto bandwidth = [](double beta) { return beta > 0 ? nlohmann::json(1.0 / beta) : nlohmann::json(nullptr); };
  nlohmann::json explorations = nlohmann::json::array();
  for (const auto& e : result.explorations) {
    nlohmann::json cands = nlohmann::json::array();
    for (const auto& o : e.outcomes)
      cands.push_back({{"ratio", o.ratio},
                       {"iteration_time_s", o.step_s},
                       {"encode_decode_s", o.codec_s},
                       {"comm_busy_s", o.comm_busy_s},
                       {"gain", o.gain},
                       {"parallel_efficiency", o.parallel_efficiency},
                       {"score", o.score}});
    explorations.push_back(
        {{"start_iteration", e.start_iteration},
         {"choice_iteration", e.choice_iteration >= 0 ? nlohmann::json(e.choice_iteration) : nlohmann::json(nullptr)},
         {"reason", e.reason},
         {"probe", {{"alpha_s", e.probe.alpha_s}, {"bandwidth_Bps", bandwidth(e.probe.beta_s_per_byte)}}},
         {"candidates", cands},
         {"chosen_ratio", e.chosen >= 0 ? nlohmann::json(a.settings.candidates[static_cast<std::size_t>(e.chosen)])
                                        : nlohmann::json(nullptr)}});
  }
  const int explored = result.totals.exploring;
  nlohmann::json per_ratio = nlohmann::json::array();
  for (const auto& [v, n] : result.totals.iterations_per_variant)
    if (v >= 0) per_ratio.push_back({{"ratio", a.settings.candidates[static_cast<std::size_t>(v)]}, {"iterations", n}});
  nlohmann::json network = nlohmann::json::array();  // the probe, where it changed
  for (std::size_t i = 0; i < result.probes.size(); ++i) {
    const auto& p = result.probes[i];
    if (i > 0 && p.alpha_s == result.probes[i - 1].alpha_s && p.beta_s_per_byte == result.probes[i - 1].beta_s_per_byte)
      continue;
    network.push_back({{"from_iteration", i}, {"alpha_s", p.alpha_s}, {"bandwidth_Bps", bandwidth(p.beta_s_per_byte)}});
  }
  const double progress = s.iterations > 0 ? static_cast<double>(s.iterations - explored) / s.iterations : 0.0;
  return {{"candidate_ratios", a.settings.candidates},
          {"explore_iterations", a.settings.explore_iterations},
          {"change_threshold", a.settings.change_threshold},
          {"weights", {{"time", a.settings.time_weight}, {"gain", a.settings.gain_weight}}},
          {"objective", "argmin over candidates of max((1 - E_par) / w_time, (1 - gain) / w_gain), "
                        "E_par = single-worker iteration time / measured iteration time"},
          {"gain_model", a.live_gain ? nlohmann::json{{"live", true},
                                                       {"basis", "measured on the co-simulated training's own gradients: "
                                                                 "sum_w |C(g_e,w)|^2 / sum_w |g_e,w|^2 per iteration, a "
                                                                 "candidate's the mean of its last 5 explored iterations"}}
                                     : nlohmann::json{{"file", a.gain_file}, {"source", a.gain->source}, {"model", a.gain->model}}},
          {"exploration_iterations", explored},
          {"progress_throughput_samples_per_s", s.throughput_samples_per_s * progress},
          {"iterations_per_ratio", per_ratio},
          {"explorations", explorations},
          {"network", network}};
}

}  // namespace detail

namespace {

nlohmann::json to_json(const Summary::Distribution& d, const char* value_name) {
  nlohmann::json histogram = nlohmann::json::array();
  for (const auto& [v, n] : d.histogram) histogram.push_back({{value_name, v}, {"count", n}});
  return {{"count", d.count}, {"mean", d.mean}, {"p95", d.p95}, {"max", d.max}, {"histogram", histogram}};
}

/// What the compressor did to one worker's buckets in one iteration.
/// Under adaptive compression, the means over the run's iterations (each ran one candidate).
std::string aggregation_name(const sim::Scenario& sc) {
  const auto& sync = *sc.training.sync_model;
  return sync.traits().uses_servers ? "parameter_server" : sync.traits().uses_collective ? "allreduce" : "gossip";
}

}  // namespace

nlohmann::json to_json(const sim::Scenario& sc, const sim::SimulationResult& result, const Summary& s) {
  nlohmann::json j;
  j["scenario"] = sc.name;
  j["ddlsim_version"] = DDLSIM_VERSION;
  j["seed"] = sc.seed;
  j["topology"] = sc.platform.topology;
  j["routing"] = platforms::to_string(sc.platform.routing);
  j["workers"] = s.workers;
  j["parameter_servers"] = sc.platform.parameter_servers;
  j["sync_model"] = sc.training.sync.name;
  j["sync_settings"] = sc.training.sync_model->settings();
  j["sync_settings"].update(sc.workload.worker.settings);
  j["aggregation"] = aggregation_name(sc);
  j["collective"] = sc.training.sharding.enabled()                     ? "ring_allgather+ring_reduce_scatter"
                    : sc.training.sync_model->traits().uses_collective ? sc.training.collective.name
                                                                       : "none";
  if (sc.training.sharding.enabled()) j["sharding"] = sim::sharding_settings(sc);
  j["compressor"] = sc.training.compressor.name;
  j["fidelity"] = sim::to_string(sc.network.fidelity);
  j["network_model"] = sim::to_string(sc.network.model);
  if (sc.network.model == sim::NetworkModel::CALIBRATED) {
    j["latency_factor"] = sc.network.latency_factor;
    j["bandwidth_factor"] = sc.network.bandwidth_factor;
  }
  if (!sc.network.calibration_file.empty()) j["calibration"] = sc.network.calibration_file;
  j["collective_granularity"] =
      sc.network.fidelity == sim::Fidelity::ANALYTIC ? "closed_form" : sim::to_string(sc.network.granularity);
  j["collective_call_cost_s"] = sc.network.collective_call_s;
  // The library's overheads and handshakes apply to the collectives' messages (both fidelities);
  // its protocol efficiency to every message, pushes, pulls and point-to-point ones too.
  j["software"] = models::to_json(sc.network.software ? *sc.network.software : models::SoftwareCost{});
  j["software"]["applies_to"] = "every message: collectives, point to point, parameter-server pushes and pulls";
  // Parameter-server pushes and pulls are point-to-point flows at every fidelity
  // (the server's NIC is what they study); say so where the rest is analytic.
  if (sc.training.sync_model->traits().uses_servers) {
    j["push_pull_fidelity"] = "flow";
    // What shared the links among them: the fluid links (SimGrid's sharing in O(log n) per flow
    // event, engine/fluid_links.hpp) or SimGrid's LMM, and why not the former.
    j["push_pull_solver"] = result.push_pull_solver;
    if (!result.push_pull_solver_reason.empty()) j["push_pull_solver_reason"] = result.push_pull_solver_reason;
  }
  // Point-to-point messages (gossip) are flows at every fidelity too.
  if (sc.training.graph) {
    j["point_to_point_fidelity"] = "flow";
    j["logical_graph"] = sc.training.graph->kind();
    if (sc.training.graph->rows() > 0)
      j["logical_graph_grid"] = {{"rows", sc.training.graph->rows()}, {"cols", sc.training.graph->cols()}};
    j["spectral_gap"] = s.spectral_gap ? nlohmann::json(*s.spectral_gap) : nlohmann::json(nullptr);
    j["spectral_gap_basis"] = s.spectral_gap_basis;
  }
  j["iterations"] = sc.workload.iterations;
  j["iterations_completed"] = s.iterations;
  j["batch_size_per_worker"] = sc.workload.batch_size;
  j["samples_per_worker_iteration"] = sc.workload.worker.samples;
  j["batch_scaling"] = sc.workload.batch_scaled ? "linear" : "none";
  j["buckets_per_iteration"] = result.buckets;
  // Under a per-unit sharding strategy the units replace the buckets (sharding.units).
  if (!models::gathers_per_unit(sc.training.sharding.strategy))
    j.update(sim::bucketing_settings(sc.training.bucketing));  // policy, its sizes, max_inflight
  j["overlap"] = sc.training.bucketing.overlap;
  j["iteration_time_s"] = s.iteration_time_s;
  j["iteration_time_median_s"] = s.iteration_time_median_s;
  j["iteration_time_p95_s"] = s.iteration_time_p95_s;
  j["iteration_time_basis"] = sc.training.sync_model->traits().synchronous ? "global_step" : "worker_mean";
  j["worker_iteration_time_s"] = s.worker_iteration_time_s;
  j["compute_time_per_iteration_s"] = s.compute_time_s;
  j["exposed_comm_time_per_iteration_s"] = s.exposed_comm_time_s;
  j["comm_time_per_iteration_s"] = s.comm_time_s;
  j["overlap_fraction"] = s.overlap_fraction;
  j["straggler_wait_per_iteration_s"] = s.straggler_wait_s;
  if (sc.training.sync_model->traits().uses_servers) j["staleness_wait_per_iteration_s"] = s.staleness_wait_s;
  j["throughput_samples_per_s"] = s.throughput_samples_per_s;
  j["updates_per_s"] = s.updates_per_s;
  j["single_worker_iteration_time_s"] = s.single_worker_iteration_time_s;
  j["speedup"] = s.speedup;
  j["scaling_efficiency"] = s.scaling_efficiency;
  j["workers_alone_throughput_samples_per_s"] = s.workers_alone_throughput;
  j.update(compute_json(sc));
  j["comm_bytes_per_iteration"] = s.comm_bytes_per_iteration;
  j["messages_per_iteration"] = s.messages_per_iteration;
  j["gradient_bytes"] = sc.workload.profile.grad_bytes();
  j["makespan_s"] = s.makespan_s;
  j["analytic_alpha_s"] = result.alpha_s;
  j["analytic_beta_s_per_byte"] = result.beta_s_per_byte;
  if (result.analytic_local) {
    j["analytic_local_alpha_s"] = result.analytic_local->alpha_s;
    j["analytic_local_beta_s_per_byte"] = result.analytic_local->beta_s_per_byte;
  }
  if (!result.collective_choices.empty()) {
    nlohmann::json choices = nlohmann::json::array();
    for (const auto& c : result.collective_choices)
      choices.push_back({{"bucket_bytes", c.bucket_bytes},
                         {"algorithm", c.algorithm},
                         {"estimated_s", c.estimated_s},
                         {"basis", c.basis}});
    j["collective_choices"] = choices;
  }
  if (!result.protocol_choices.empty()) {  // software "nccl": what each bucket size runs with (at time 0)
    nlohmann::json protocols = nlohmann::json::array();
    for (const auto& p : result.protocol_choices)
      protocols.push_back({{"bucket_bytes", p.bucket_bytes}, {"protocol", p.protocol}, {"call_cost_s", p.call_cost_s}});
    j["software"]["protocol_by_bucket"] = protocols;
  }
  if (sc.training.compressor.name != "none") j["compression"] = detail::compression_json(sc, result);
  if (sc.training.adaptive.enabled) j["adaptive_compression"] = detail::adaptive_json(sc, result, s);
  if (s.staleness.count > 0) j["staleness"] = to_json(s.staleness, "updates");
  if (s.neighbour_staleness.count > 0) j["neighbour_staleness"] = to_json(s.neighbour_staleness, "iterations");
  if (auto events = events_json(sc, result); !events.is_null()) j["events"] = std::move(events);
  return j;
}

}  // namespace ddlsim::analysis
