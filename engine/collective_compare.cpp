#include "engine/collective_compare.hpp"

#include "models/protocol_choice.hpp"
#include "models/units.hpp"
#include "scenario/actor_capacity.hpp"
#include "engine/s4u_emitter.hpp"
#include "scenario/analytic_network.hpp"
#include "scenario/collective_group.hpp"
#include "engine/engine.hpp"
#include "engine/flow_bounds.hpp"
#include "engine/ns3_binding.hpp"
#include "engine/schedule_executor.hpp"
#include "engine/simulation.hpp"
#include "engine/stepwise_replay.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <memory>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {

namespace {

/// The call's protocol and fixed cost (models/protocol_choice.hpp); a collective among one rank is
/// no call at all.
models::CallProtocol call_of(const CompareRequest& req, const models::Collective& algo, const models::CollectiveGroup& group,
                             const models::AlphaBeta& ab) {
  auto call = models::call_protocol(algo, group, req.bytes, ab, req.network.collective_call_s,
                                    req.network.collective_call_given);
  if (!(group.workers > 1 || algo.uses_servers())) call.call_cost_s = 0;
  return call;
}

}  // namespace

double bus_factor(const std::string& operation, int n) {
  if (n <= 1) return 0.0;
  if (operation == "allreduce") return 2.0 * (n - 1) / n;
  if (operation == "allgather" || operation == "reduce_scatter") return (n - 1.0) / n;
  return 1.0;
}

namespace {

/// t is the minimum `best` up to floating-point noise (1e-9 relative).
bool ties(double t, double best) { return t - best <= 1e-9 * std::abs(best); }

/// Marks, per operation, the real algorithm(s) with the smallest time. A meta row
/// ("auto") runs the algorithm it resolves to: when that algorithm is compared
/// too (with its default params, as auto uses it), the two tie by construction
/// and only the real one is marked; otherwise the meta row stands for it.
void mark_fastest(std::vector<CompareRow>& rows, const std::set<std::string>& default_real) {
  auto time_of = [](const CompareRow& r) { return r.simulated_s >= 0 ? r.simulated_s : r.analytic_s; };
  auto candidate = [&](const CompareRow& r) {
    return r.applicable && (r.resolved.empty() || default_real.count(r.resolved) == 0);
  };
  std::map<std::string, double> best;
  for (const auto& row : rows) {
    if (!candidate(row)) continue;
    auto it = best.find(row.operation);
    if (it == best.end() || time_of(row) < it->second) best[row.operation] = time_of(row);
  }
  for (auto& row : rows) row.fastest = candidate(row) && ties(time_of(row), best.at(row.operation));
}

}  // namespace

namespace {

/// The compared algorithms, built from --algorithms and --params, and their rows.
struct Compared {
  std::vector<std::string> names;
  std::vector<std::shared_ptr<const models::Collective>> algorithms;
  std::vector<CompareRow> rows;
  bool servers = false;  // a parameter-server algorithm runs: servers are attached
};

/// An algorithm's params as given in --params (an empty object when none).
json params_of(const CompareRequest& req, const std::string& name) {
  return req.params.is_object() && req.params.contains(name) ? req.params.at(name) : json::object();
}

/// Checks --params (an object naming compared algorithms only) and builds every compared algorithm;
/// a parameter-server algorithm without --servers is refused when named, left out when all are compared.
Compared compared_algorithms(const CompareRequest& req) {
  auto& registry = models::CollectiveRegistry::instance();
  const bool all = req.algorithms.empty();
  Compared c;
  c.names = all ? registry.names() : req.algorithms;
  ObjectReader params_reader(req.params, "--params");  // refuses a non-object
  for (const auto& [name, value] : req.params.items()) {
    const std::string path = pointer_append("--params", name);
    registry.check_name(name, path, "collective");
    if (std::find(c.names.begin(), c.names.end(), name) == c.names.end())
      throw ConfigError(path, fmt::format("\"{}\" is not among the compared algorithms ({})", name, join_names(c.names)));
  }
  for (const auto& name : c.names) {
    c.algorithms.push_back(
        registry.create(name, params_of(req, name), "--algorithms", pointer_append("--params", name), "collective"));
    CompareRow row;
    row.algorithm = name;
    row.operation = c.algorithms.back()->operation();
    row.uses_servers = c.algorithms.back()->uses_servers();
    if (row.uses_servers && req.servers < 1) {
      if (!all)
        throw ConfigError("--servers",
                          fmt::format("collective \"{}\" needs at least 1 parameter server, got {}", name, req.servers));
      row.applicable = false;
      row.note = "needs --servers >= 1";
    }
    c.servers = c.servers || (row.uses_servers && row.applicable);
    c.rows.push_back(row);
  }
  return c;
}

/// The platform the algorithms run on, and the alpha-beta their closed forms see.
struct ComparePlatform {
  platforms::Topology topology;
  models::CollectiveGroup group;
  models::AlphaBeta ab_workers, ab_servers;
};

/// The topology exactly as asked, for the workers only; servers, when a PS algorithm runs, hang off
/// worker 0's switch (or worker 0) on links of their own (noted on the PS rows).
ComparePlatform compare_platform(const CompareRequest& req, Compared& c) {
  platforms::BuildRequest build;
  build.workers = req.workers;
  build.parameter_servers = 0;
  build.link = req.link;
  build.workers_path = "--workers";
  build.params_path = "--topology-params";
  auto builder = platforms::TopologyRegistry::instance().create(req.topology, req.topology_params, "--topology",
                                                                "--topology-params", "topology");
  ComparePlatform p{builder->build(build), {}, {}, {}};
  auto& topo = p.topology;
  platforms::check_connected(topo, "--topology-params");
  check_link_ranges(topo, "--topology-params");
  check_gpus_per_node(topo, req.workers, req.topology_params.is_object() && req.topology_params.contains("gpus_per_node"),
                      "--topology-params");
  // Closed forms: worker-only algorithms see the workers' network, so adding a
  // server changes none of them; PS algorithms see the paths to the servers too.
  // The closed forms see the network model's factors, as analytic fidelity does (tcp: refused there;
  // here the closed form stays that of the ideal network, to compare against TCP's simulated cost).
  const auto calibrated = [&req](const models::AlphaBeta& ab) {
    models::AlphaBeta out = req.network.model == NetworkModel::CALIBRATED
                                ? ab.scaled(req.network.latency_factor, req.network.bandwidth_factor)
                                : ab;
    out.software = req.network.software;
    return out;
  };
  p.ab_workers = calibrated(analytic_alpha_beta(topo));
  p.group = make_collective_group(topo, req.network.granularity == Granularity::PIPELINED,
                                  req.routing.value_or(platforms::default_routing(req.topology)), req.seed,
                                  req.network.software);
  p.ab_servers = p.ab_workers;
  if (c.servers) {
    platforms::LinkSpec server_link = req.link;
    if (req.server_bandwidth_Bps > 0) server_link.bandwidth_Bps = req.server_bandwidth_Bps;
    const auto at = platforms::attach_servers(topo, req.servers, server_link);
    for (auto& row : c.rows)
      if (row.uses_servers && row.applicable) row.note = "servers attached to " + topo.graph[at].name;
    p.group.servers = req.servers;
    p.ab_servers = calibrated(analytic_alpha_beta(topo));
  }
  return p;
}

/// Every applicable row's closed form (the call cost included) and what a meta-collective resolves
/// to; returns the real algorithms compared with their default params (mark_fastest's rule).
std::set<std::string> price_closed_forms(const CompareRequest& req, Compared& c, const ComparePlatform& p,
                                         std::vector<models::AlphaBeta>& ab_of) {
  std::set<std::string> default_real;
  for (std::size_t i = 0; i < c.algorithms.size(); ++i) {
    auto& row = c.rows[i];
    const auto& algo = *c.algorithms[i];
    ab_of.push_back(algo.uses_servers() ? p.ab_servers : p.ab_workers);
    if (!row.applicable) continue;
    row.resolved = models::resolved_name(algo, p.group, req.bytes, ab_of[i]);
    if (row.resolved.empty() && params_of(req, c.names[i]).empty()) default_real.insert(c.names[i]);
    try {
      const auto call = call_of(req, algo, p.group, ab_of[i]);
      row.analytic_s =
          call.call_cost_s + algo.analytic_time_s(p.group, req.bytes, models::with_software(ab_of[i], call.software));
    } catch (const std::invalid_argument& e) {
      if (req.algorithms.empty()) {  // all compared: one that cannot run this size is left out, with a note
        row.applicable = false;
        row.note = e.what();
        continue;
      }
      throw ConfigError(params_of(req, c.names[i]).empty() ? std::string("--algorithms")
                                                           : pointer_append("--params", c.names[i]),
                        fmt::format("\"{}\" cannot run here: {}", c.names[i], e.what()));
    }
  }
  return default_real;
}

/// Flow fidelity: one SimGrid actor per rank runs each applicable algorithm in turn, between two
/// barriers; rank 0 records the time from the first barrier to the second.
void simulate_rows(const CompareRequest& req, const std::vector<std::string>& engine_args, Compared& c,
                   const ComparePlatform& p, const std::vector<models::AlphaBeta>& ab_of) {
  EngineSession session(engine_args, req.network);
  const auto platform = platforms::emit_platform(p.topology, byte_scale(), {},
                                                 req.routing.value_or(platforms::default_routing(req.topology)), req.seed);
  if (req.network.fidelity == Fidelity::PACKET) ns3_binding::platform_created(req.network.packet);
  ScheduleExecutor executor(platform.hosts, executor_network(req.network));
  const auto& group = p.group;
  const int ranks = group.size();
  const bool stepwise = req.network.granularity == Granularity::STEPWISE;
  // Rows whose transfers never share a link: replayed, no actors (engine/stepwise_replay.hpp).
  const bool replay = req.replay && req.network.link_traces.empty() && cm02_refusal(engine_args).empty();
  bool simgrid_rows = false;
  for (std::size_t i = 0; i < c.algorithms.size(); ++i) {
    if (!c.rows[i].applicable) continue;
    if (replay) {
      const auto& algo = models::resolve(*c.algorithms[i], group, req.bytes, ab_of[i]);
      const auto call = call_of(req, algo, group, ab_of[i]);
      std::vector<ReplayRank> plan(static_cast<std::size_t>(ranks));
      for (int r = 0; r < ranks; ++r) {
        if (!(r < group.workers || algo.uses_servers())) continue;
        auto& rank = plan[static_cast<std::size_t>(r)];
        rank.steps = rank_steps(algo, r, group, req.bytes, stepwise);
        rank.start_s = r < group.workers ? call.call_cost_s : 0.0;
        rank.software = call.software.get();
      }
      const auto result = replay_stepwise(executor, plan);
      if (result.replayed) {
        c.rows[i].simulated_s = result.end_s;
        c.rows[i].flows = result.flows;
        c.rows[i].replayed = true;
        continue;
      }
    }
    simgrid_rows = true;
  }
  if (!simgrid_rows) return;
  // The warm-up rounds run untimed first (packet fidelity: they open the pairs' TCP connections and
  // grow their windows, as a library's start and a measurement's warm-up rounds do).
  const int rounds = 1 + req.warmup_rounds;
  auto barrier = sg4::Barrier::create(static_cast<unsigned>(ranks));
  for (int r = 0; r < ranks; ++r) {
    sg4::Actor::create(fmt::format("rank-{}", r), platform.hosts[static_cast<std::size_t>(r)], session.guard([&, r]() {
      for (std::size_t i = 0; i < c.algorithms.size(); ++i) {
        if (!c.rows[i].applicable || c.rows[i].replayed) continue;
        const auto& algo = models::resolve(*c.algorithms[i], group, req.bytes, ab_of[i]);
        const auto call = call_of(req, algo, group, ab_of[i]);
        for (int round = 0; round < rounds; ++round) {
          TrafficCounters traffic;
          barrier->wait();
          const double t0 = sg4::Engine::get_clock();
          if (r < group.workers && call.call_cost_s > 0) sg4::this_actor::sleep_for(call.call_cost_s);
          if (r < group.workers || algo.uses_servers()) {
            const auto steps = rank_steps(algo, r, group, req.bytes, stepwise);
            executor.run(r, *steps, traffic, nullptr, call.software.get());
          }
          barrier->wait();
          if (round + 1 < rounds) continue;
          c.rows[i].flows += traffic.flows;
          if (r == 0) c.rows[i].simulated_s = sg4::Engine::get_clock() - t0;
        }
      }
    }));
  }
  session.engine().run();
  session.rethrow_if_failed();
  if (session.deadlocked()) throw std::runtime_error("the collective comparison deadlocked");
}

}  // namespace

std::vector<CompareRow> compare_collectives(const CompareRequest& req, const std::vector<std::string>& engine_args) {
  Compared c = compared_algorithms(req);
  // SimGrid needs an actor per rank: refuse, before building anything, more than a process holds.
  if (req.simulate)
    check_actor_room({"--workers", "ranks", req.workers, 1}, {"--servers", "parameter servers", c.servers ? req.servers : 0, 1},
                     "--fidelity analytic needs no actors");
  const ComparePlatform p = compare_platform(req, c);
  std::vector<models::AlphaBeta> ab_of;
  const std::set<std::string> default_real = price_closed_forms(req, c, p, ab_of);
  if (req.before_run)
    req.before_run(CompareWork{req, p.topology, p.group, c.algorithms, ab_of, c.rows,
                               [&req](const std::string& name) { return params_of(req, name); }});
  if (req.simulate) simulate_rows(req, engine_args, c, p, ab_of);
  for (auto& row : c.rows) {
    if (!row.applicable) continue;
    const double t = row.simulated_s >= 0 ? row.simulated_s : row.analytic_s;
    row.algbw_GBps = t > 0 ? req.bytes / t / 1e9 : 0;
    row.busbw_GBps = row.algbw_GBps * bus_factor(row.operation, req.workers);
  }
  mark_fastest(c.rows, default_real);
  return c.rows;
}

}  // namespace ddlsim::sim
