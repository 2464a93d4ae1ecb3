#include "sim/collective_compare.hpp"

#include "models/units.hpp"
#include "platforms/s4u_emitter.hpp"
#include "sim/engine.hpp"
#include "sim/schedule_executor.hpp"
#include "sim/simulation.hpp"

#include <fmt/format.h>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {

double bus_factor(const std::string& operation, int n) {
  if (n <= 1) return 0.0;
  if (operation == "allreduce") return 2.0 * (n - 1) / n;
  if (operation == "allgather" || operation == "reduce_scatter") return (n - 1.0) / n;
  return 1.0;
}

std::vector<CompareRow> compare_collectives(const CompareRequest& req, const std::vector<std::string>& engine_args) {
  auto& registry = models::CollectiveRegistry::instance();
  std::vector<std::string> names = req.algorithms.empty() ? registry.names() : req.algorithms;
  std::vector<std::shared_ptr<const models::Collective>> algorithms;
  for (const auto& name : names)
    algorithms.push_back(registry.create(name, json::object(), "--algorithms", "--algorithms", "collective"));

  platforms::BuildRequest build;
  build.workers = req.workers;
  build.parameter_servers = req.servers;
  build.link = req.link;
  build.workers_path = "--workers";
  build.params_path = "--topology";
  auto builder = platforms::TopologyRegistry::instance().create(req.topology, req.topology_params, "--topology",
                                                                "--topology", "topology");
  const platforms::Topology topo = builder->build(build);
  platforms::check_connected(topo, "--topology");
  const models::AlphaBeta ab = analytic_alpha_beta(topo);
  models::CollectiveGroup group{req.workers, req.servers, nullptr};
  if (auto nb = platforms::rank_neighbours(topo); !nb.empty())
    group.neighbours = std::make_shared<const std::vector<std::vector<int>>>(std::move(nb));

  std::vector<CompareRow> rows;
  for (std::size_t i = 0; i < algorithms.size(); ++i) {
    const auto& algo = *algorithms[i];
    if (algo.uses_servers() && req.servers < 1)
      throw ConfigError("--servers", fmt::format("collective \"{}\" needs at least 1 parameter server", names[i]));
    CompareRow row;
    row.algorithm = names[i];
    row.operation = algo.operation();
    row.resolved = algo.resolved_name(group, req.bytes, ab);
    try {
      row.analytic_s = algo.analytic_time_s(group, req.bytes, ab);
    } catch (const std::invalid_argument& e) {
      throw ConfigError("--algorithms", fmt::format("\"{}\" cannot run here: {}", names[i], e.what()));
    }
    rows.push_back(row);
  }

  if (req.simulate) {
    EngineSession session(engine_args, req.network);
    const auto platform = platforms::emit_platform(topo, BYTE_SCALE, {},
                                                   req.routing.value_or(platforms::default_routing(req.topology)), req.seed);
    ScheduleExecutor executor(platform.hosts);
    const int ranks = group.size();
    auto barrier = sg4::Barrier::create(static_cast<unsigned>(ranks));
    const bool stepwise = req.network.granularity == Granularity::STEPWISE;
    for (int r = 0; r < ranks; ++r) {
      sg4::Actor::create(fmt::format("rank-{}", r), platform.hosts[static_cast<std::size_t>(r)], session.guard([&, r]() {
        for (std::size_t i = 0; i < algorithms.size(); ++i) {
          const auto& algo = algorithms[i]->resolve(group, req.bytes, ab);
          TrafficCounters traffic;
          barrier->wait();
          const double t0 = sg4::Engine::get_clock();
          if (r < group.workers || algo.uses_servers())
            executor.run(r, stepwise ? algo.rank_schedule(r, group, req.bytes) : algo.rank_phases(r, group, req.bytes),
                         traffic);
          rows[i].flows += traffic.flows;
          barrier->wait();
          if (r == 0) rows[i].simulated_s = sg4::Engine::get_clock() - t0;
        }
      }));
    }
    session.engine().run();
    session.rethrow_if_failed();
    if (session.deadlocked()) throw std::runtime_error("the collective comparison deadlocked");
  }

  std::map<std::string, double> best;
  for (auto& row : rows) {
    const double t = row.simulated_s >= 0 ? row.simulated_s : row.analytic_s;
    row.algbw_GBps = t > 0 ? req.bytes / t / 1e9 : 0;
    row.busbw_GBps = row.algbw_GBps * bus_factor(row.operation, req.workers);
    auto it = best.find(row.operation);
    if (it == best.end() || t < it->second) best[row.operation] = t;
  }
  for (auto& row : rows) {
    const double t = row.simulated_s >= 0 ? row.simulated_s : row.analytic_s;
    row.fastest = t == best[row.operation] && row.algorithm != "auto";
  }
  return rows;
}

std::string format_compare(const CompareRequest& req, const std::vector<CompareRow>& rows, bool csv) {
  std::string out;
  if (csv) {
    out += "algorithm,operation,resolved,analytic_time_s,simulated_time_s,algbw_GBps,busbw_GBps,fastest,flows\n";
    for (const auto& r : rows)
      out += fmt::format("{},{},{},{:.9g},{},{:.6g},{:.6g},{},{}\n", r.algorithm, r.operation, r.resolved, r.analytic_s,
                         r.simulated_s >= 0 ? fmt::format("{:.9g}", r.simulated_s) : std::string(), r.algbw_GBps,
                         r.busbw_GBps, r.fastest ? 1 : 0, r.flows);
    return out;
  }
  out += fmt::format("{} workers{}, {} per rank, {} topology ({} routing), links {} / {}, {}\n", req.workers,
                     req.servers > 0 ? fmt::format(" + {} server{}", req.servers, req.servers > 1 ? "s" : "") : "", units::format_bytes(req.bytes),
                     req.topology, platforms::to_string(req.routing.value_or(platforms::default_routing(req.topology))),
                     units::format_bandwidth(req.link.bandwidth_Bps), units::format_time(req.link.latency_s),
                     req.simulate ? fmt::format("flow fidelity ({}, {} network)", to_string(req.network.granularity),
                                                to_string(req.network.model))
                                  : "analytic fidelity (closed forms only)");
  out += fmt::format("{:<22} {:<15} {:>14} {:>14} {:>11} {:>11}\n", "algorithm", "operation", "analytic_s",
                     "simulated_s", "algbw_GBps", "busbw_GBps");
  for (const auto& r : rows) {
    std::string name = r.resolved.empty() ? r.algorithm : fmt::format("{} ({})", r.algorithm, r.resolved);
    out += fmt::format("{:<22} {:<15} {:>14.6g} {:>14} {:>11.4g} {:>11.4g}{}\n", name, r.operation, r.analytic_s,
                       r.simulated_s >= 0 ? fmt::format("{:.6g}", r.simulated_s) : std::string("-"), r.algbw_GBps,
                       r.busbw_GBps, r.fastest ? "  * fastest" : "");
  }
  return out;
}

}  // namespace ddlsim::sim
