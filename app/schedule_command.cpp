// ddlsim: `ddlsim schedule` (app/schedule_command.hpp).
#include "app/schedule_command.hpp"

#include "models/collective.hpp"
#include "models/error.hpp"
#include "models/json_input.hpp"
#include "models/units.hpp"
#include "app/compare_estimate.hpp"
#include "scenario/scenario.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::sim {

json schedule_document(const ScheduleRequest& request) {
  using models::CollectiveRegistry;
  const auto collective = CollectiveRegistry::instance().create(request.algorithm, request.params, "--algorithm",
                                                                "--params", "collective");
  if (request.workers < 1 || request.workers > MAX_WORKERS)
    throw ConfigError("--workers", fmt::format("expected an integer in [1, {}], got {}", MAX_WORKERS, request.workers));
  if (!(request.bytes >= 0)) throw ConfigError("--bytes", fmt::format("expected a size >= 0, got {}", request.bytes));
  if (request.bandwidth_Bps.has_value() != request.latency_s.has_value())
    throw ConfigError(request.bandwidth_Bps ? "--latency" : "--bandwidth",
                      "--bandwidth and --latency go together (the network of the closed form)");
  int servers = collective->uses_servers() ? 1 : 0;
  if (request.servers) {
    if (*request.servers < 0 || *request.servers > MAX_WORKERS)
      throw ConfigError("--servers", fmt::format("expected an integer in [0, {}], got {}", MAX_WORKERS, *request.servers));
    if (*request.servers > 0 && !collective->uses_servers())
      throw ConfigError("--servers", fmt::format("\"{}\" uses no parameter servers", request.algorithm));
    if (*request.servers == 0 && collective->uses_servers())
      throw ConfigError("--servers", fmt::format("\"{}\" needs at least one parameter server", request.algorithm));
    servers = *request.servers;
  }
  const models::CollectiveGroup group(request.workers, servers);
  std::optional<models::AlphaBeta> network;
  if (request.bandwidth_Bps) {
    if (!(*request.bandwidth_Bps > 0)) throw ConfigError("--bandwidth", "expected a bandwidth > 0");
    network = models::AlphaBeta(*request.latency_s, 1.0 / *request.bandwidth_Bps);
  }

  json doc = json::object();
  doc["algorithm"] = request.algorithm;
  doc["operation"] = collective->operation();
  doc["workers"] = request.workers;
  doc["servers"] = servers;
  doc["bytes"] = request.bytes;
  doc["granularity"] = request.pipelined ? "pipelined" : "stepwise";
  doc["params"] = request.params;
  json ranks = json::array(), latency_steps = json::array(), windows = json::array();
  bool windowed = false;
  try {
    // A meta-algorithm runs its pick for this network (without one, the pick of its own default).
    const models::Collective& runs =
        network ? models::resolve(*collective, group, request.bytes, *network) : *collective;
    const std::string picked = network ? models::resolved_name(*collective, group, request.bytes, *network) : "";
    doc["runs"] = picked.empty() ? request.algorithm : picked;
    if (request.before_build)
      request.before_build(estimate_schedule(runs, group, request.bytes, request.pipelined,
                                             request.params.empty() ? "--workers" : "--params"));
    for (int rank = 0; rank < group.size(); ++rank) {
      const auto steps = request.pipelined ? runs.rank_phases(rank, group, request.bytes)
                                           : runs.rank_schedule(rank, group, request.bytes);
      json rank_steps = json::array(), rank_latency = json::array(), rank_window = json::array();
      for (const auto& step : steps) {
        json ops = json::array();
        for (const auto& op : step.ops)
          ops.push_back(json{{"kind", op.kind == models::RankOp::Kind::SEND ? "send" : "recv"},
                             {"peer", op.peer},
                             {"bytes", op.bytes}});
        rank_steps.push_back(std::move(ops));
        rank_latency.push_back(step.latency_steps);
        rank_window.push_back(step.window);
        windowed = windowed || step.window > 0;
      }
      ranks.push_back(std::move(rank_steps));
      latency_steps.push_back(std::move(rank_latency));
      windows.push_back(std::move(rank_window));
    }
    if (network) doc["analytic_time_s"] = collective->analytic_time_s(group, request.bytes, *network);
  } catch (const std::invalid_argument& e) {  // an algorithm refusing this group (e.g. torus2d's rows)
    throw ConfigError("--workers", e.what());
  }
  doc["ranks"] = std::move(ranks);
  doc["latency_steps"] = std::move(latency_steps);
  if (windowed) doc["window"] = std::move(windows);  // only windowed algorithms (gloo_ring) have it
  return doc;
}

ScheduleCommand::ScheduleCommand(CLI::App& app) {
  command_ = app.add_subcommand("schedule", "print every rank's point-to-point steps of one collective call as JSON");
  command_->add_option("--algorithm,-a", request_.algorithm, "collective algorithm (ddlsim list)")->required();
  command_->add_option("--workers,-n", request_.workers, "number of workers N")->required();
  servers_option_ = command_->add_option("--servers", servers_,
                                         "parameter servers S (ranks N..N+S-1); default 1 for ps-like algorithms, else 0");
  command_->add_option("--bytes,-m", bytes_, "size M as the algorithm counts it: 1MiB, 64KiB, or a bare number of bytes")
      ->required();
  command_->add_option("--params", params_, "the algorithm's parameters as JSON, e.g. '{\"segments\": 2}'")
      ->capture_default_str();
  command_->add_option("--granularity", granularity_, "stepwise (every step) or pipelined (merged phases)")
      ->capture_default_str();
  command_->add_option("--bandwidth,-b", bandwidth_, "with --latency: a network for auto to pick by; adds analytic_time_s");
  command_->add_option("--latency,-l", latency_, "with --bandwidth: the path latency");
  limits_.add_to(command_, "schedules");
}

int ScheduleCommand::run(const Invocation&) const {
  ScheduleRequest request = request_;
  request.bytes = units::cli_bytes(bytes_, "--bytes");
  if (servers_option_->count() > 0) request.servers = servers_;
  request.params = parse_json_option(params_, "--params");
  if (granularity_ != "stepwise" && granularity_ != "pipelined")
    throw ConfigError("--granularity", fmt::format("expected stepwise or pipelined, got \"{}\"", granularity_));
  request.pipelined = granularity_ == "pipelined";
  if (!bandwidth_.empty()) request.bandwidth_Bps = units::cli_bandwidth_Bps(bandwidth_, "--bandwidth");
  if (!latency_.empty()) request.latency_s = units::cli_latency_s(latency_, "--latency");
  (void)limits_.limits();  // --max-time and --max-memory checked first
  request.before_build = [this](const WorkEstimate& e) { limits_.apply(e); };
  try {
    fmt::print("{}\n", schedule_document(request).dump());
  } catch (const EstimateOnly&) {
  }
  return 0;
}

}  // namespace ddlsim::sim
