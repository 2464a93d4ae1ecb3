// ddlsim: `ddlsim schedule` (app/schedule_command.hpp).
#include "app/schedule_command.hpp"

#include "models/collective.hpp"
#include "models/error.hpp"
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
  json ranks = json::array(), latency_steps = json::array();
  try {
    // A meta-algorithm runs its pick for this network (without one, the pick of its own default).
    const models::Collective& runs =
        network ? collective->resolve(group, request.bytes, *network) : *collective;
    const std::string picked = network ? collective->resolved_name(group, request.bytes, *network) : "";
    doc["runs"] = picked.empty() ? request.algorithm : picked;
    if (request.before_build)
      request.before_build(estimate_schedule(runs, group, request.bytes, request.pipelined,
                                             request.params.empty() ? "--workers" : "--params"));
    for (int rank = 0; rank < group.size(); ++rank) {
      const auto steps = request.pipelined ? runs.rank_phases(rank, group, request.bytes)
                                           : runs.rank_schedule(rank, group, request.bytes);
      json rank_steps = json::array(), rank_latency = json::array();
      for (const auto& step : steps) {
        json ops = json::array();
        for (const auto& op : step.ops)
          ops.push_back(json{{"kind", op.kind == models::RankOp::Kind::SEND ? "send" : "recv"},
                             {"peer", op.peer},
                             {"bytes", op.bytes}});
        rank_steps.push_back(std::move(ops));
        rank_latency.push_back(step.latency_steps);
      }
      ranks.push_back(std::move(rank_steps));
      latency_steps.push_back(std::move(rank_latency));
    }
    if (network) doc["analytic_time_s"] = collective->analytic_time_s(group, request.bytes, *network);
  } catch (const std::invalid_argument& e) {  // an algorithm refusing this group (e.g. torus2d's rows)
    throw ConfigError("--workers", e.what());
  }
  doc["ranks"] = std::move(ranks);
  doc["latency_steps"] = std::move(latency_steps);
  return doc;
}

}  // namespace ddlsim::sim
