// ddlsim: `ddlsim collectives` (app/collectives_command.hpp).
#include "app/collectives_command.hpp"

#include "models/collective.hpp"
#include "models/error.hpp"
#include "models/json_input.hpp"
#include "models/software_cost.hpp"
#include "models/units.hpp"
#include "platforms/routing.hpp"
#include "engine/collective_compare.hpp"
#include "app/compare_estimate.hpp"
#include "app/estimate_options.hpp"
#include "scenario/packet_checks.hpp"
#include "scenario/scenario.hpp"
#include "scenario/work_estimate.hpp"

#include <fmt/format.h>
#include <limits>

namespace ddlsim::sim {

CollectivesCommand::CollectivesCommand(CLI::App& app) {
  auto* c = command_ = app.add_subcommand("collectives", "compare every collective algorithm for one N, M, bandwidth, latency");
  c->add_option("--workers,-n", workers_, fmt::format("number of ranks N (1 to {})", MAX_WORKERS))->capture_default_str();
  c->add_option("--bytes,-m", bytes_, "message size M per rank: 100MiB, 1GB, ... or a bare number of bytes")
      ->capture_default_str();
  c->add_option("--bandwidth,-b", bandwidth_,
                "link bandwidth with its unit: 25Gbps (bits/s) or 3.125GBps (bytes/s); a bare number is refused")
      ->capture_default_str();
  c->add_option("--latency,-l", latency_, "link latency: 1us, 2ms, ... or a bare number of seconds")->capture_default_str();
  c->add_option("--topology,-t", topology_, "topology builder name (built for the N workers only)")->capture_default_str();
  c->add_option("--topology-params", topology_params_, "topology parameters as JSON, e.g. '{\"k\": 4}'")
      ->capture_default_str();
  routing_opt_ = c->add_option("--routing", routing_, "shortest, ecmp or dmodk (default: ecmp on fat_tree, else shortest)");
  c->add_option("--seed", seed_, "seed of the ECMP flow hash (0 or more)")->capture_default_str();
  servers_opt_ = c->add_option(
      "--servers", servers_,
      "parameter servers S for ps, each on its own link to the switch worker 0 hangs off (worker 0 itself on "
      "direct-connect topologies), added only when ps runs; default 1 when --algorithms names ps, else 0 (ps is then "
      "listed as not run)");
  server_bw_opt_ = c->add_option("--server-bandwidth", server_bandwidth_, "bandwidth of each server's link (default: --bandwidth)");
  c->add_option("--fidelity", fidelity_,
                "analytic (closed forms), flow (also simulate) or packet (also simulate every segment with ns-3)")
      ->capture_default_str();
  warmup_opt_ = c->add_option("--warmup", warmup_,
                              "untimed runs of each algorithm before the timed one (0 to 100; default 1 at packet "
                              "fidelity, where they open the TCP connections and grow their windows, else 0)");
  packet_opt_ = c->add_option("--packet", packet_,
                              "packet fidelity's TCP and queue settings (network.packet) as JSON, e.g. "
                              "'{\"segment_bytes\": 8948}' (default: a Linux host's; docs/scenario.md)");
  c->add_option("--granularity", granularity_, "stepwise or pipelined (flow fidelity)")->capture_default_str();
  c->add_option("--solver", solver_,
                "flow fidelity: auto (schedules whose transfers never share a link are replayed without SimGrid's "
                "actors: the same times, faster) or simgrid (always SimGrid)")
      ->capture_default_str();
  c->add_option("--model", model_, "network model: ideal, tcp or calibrated (flow fidelity)")->capture_default_str();
  latency_factor_opt_ = c->add_option("--latency-factor", latency_factor_,
                                      "calibrated model: SimGrid's network/latency-factor (default 1)");
  bandwidth_factor_opt_ = c->add_option("--bandwidth-factor", bandwidth_factor_,
                                        "calibrated model: SimGrid's network/bandwidth-factor (default 1)");
  call_cost_opt_ = c->add_option("--call-cost", call_cost_,
                                 "fixed cost of every collective call, paid before its first message "
                                 "(network.collective_call_cost; default: the --software preset's, else 10us)");
  software_opt_ = c->add_option("--software", software_,
                                "the library's software costs (network.software): a preset (ideal, gloo, mpi, "
                                "nccl_simple, nccl_ll, nccl_ll128; `ddlsim list`) or a JSON object, e.g. '{\"preset\": "
                                "\"gloo\", \"send_overhead\": \"30us\"}' (default: ideal)");
  c->add_option("--algorithms", algorithms_, "only these algorithms (default: all)")->delimiter(',');
  c->add_option("--params", params_, "algorithm parameters as JSON, name -> params, e.g. '{\"ring\": {\"segments\": 4}}'")
      ->capture_default_str();
  c->add_flag("--csv", csv_, "print CSV instead of a table (rows that did not run are left out)");
  limits_.add_to(c, "comparisons");
}

int CollectivesCommand::run(const Invocation& invocation) const {
  const auto& engine_args = invocation.engine_args;

  namespace units = ddlsim::units;
  CompareRequest req;
  // The scenario's ranges: platform.workers, platform.parameter_servers and seed.
  req.workers = static_cast<int>(checked_integer(json(workers_), "--workers", 1, MAX_WORKERS));
  const int servers = static_cast<int>(checked_integer(json(servers_), "--servers", 0, MAX_WORKERS));
  req.seed = static_cast<std::uint64_t>(
      checked_integer(json(seed_), "--seed", 0, std::numeric_limits<std::int64_t>::max()));
  req.bytes = units::cli_bytes(bytes_, "--bytes");
  req.link.bandwidth_Bps = units::cli_bandwidth_Bps(bandwidth_, "--bandwidth");
  req.link.latency_s = units::cli_latency_s(latency_, "--latency");
  std::optional<double> preset_call_s;
  if (software_opt_->count() > 0) {
    const bool object = software_.find('{') != std::string::npos;
    const json value = object ? parse_json_option(software_, "--software") : json(software_);
    auto software = models::read_software(value, "--software");
    preset_call_s = software.call_cost_s;
    req.network.software = std::make_shared<const models::SoftwareCost>(std::move(software));
  }
  req.network.collective_call_given = call_cost_opt_->count() > 0;
  req.network.collective_call_s = call_cost_opt_->count() > 0 || !preset_call_s ? units::cli_time_s(call_cost_, "--call-cost")
                                                                                 : *preset_call_s;
  if (req.network.collective_call_s > MAX_CALL_COST_S)
    throw ConfigError("--call-cost", call_cost_range_message(req.network.collective_call_s));
  if (server_bw_opt_->count() > 0) req.server_bandwidth_Bps = units::cli_bandwidth_Bps(server_bandwidth_, "--server-bandwidth");
  req.topology = topology_;
  req.topology_params = parse_json_option(topology_params_, "--topology-params");
  req.params = parse_json_option(params_, "--params");
  // Option values checked by the scenario's readers, reported under the option's name.
  const json flag_values{{"fidelity", fidelity_},        {"granularity", granularity_}, {"solver", solver_},
                         {"model", model_},              {"latency-factor", latency_factor_},
                         {"bandwidth-factor", bandwidth_factor_}, {"routing", routing_}};
  ObjectReader flags(flag_values, "");
  auto as_option = [](const std::string& key, auto read) {
    try {
      return read();
    } catch (const ConfigError& e) {
      throw ConfigError("--" + key, std::string(e.what()).substr(e.path().size() + 2));
    }
  };
  auto check = [&](const std::string& key, const std::vector<std::string>& choices) {
    return as_option(key, [&] { return flags.choice(key, choices, ""); });
  };
  const std::string fidelity = check("fidelity", {"analytic", "flow", "packet"});
  req.simulate = fidelity != "analytic";
  req.network.fidelity = fidelity == "analytic" ? Fidelity::ANALYTIC : fidelity == "flow" ? Fidelity::FLOW : Fidelity::PACKET;
  if (req.network.fidelity == Fidelity::PACKET)
    req.network.packet = read_packet_settings(ObjectReader(parse_json_option(packet_, "--packet"), "--packet"));
  else if (packet_opt_->count() > 0)
    throw ConfigError("--packet", fmt::format("only valid with --fidelity packet, not \"{}\"", fidelity));
  if (warmup_opt_->count() > 0 && !req.simulate)
    throw ConfigError("--warmup", "only valid when simulating (--fidelity flow or packet): closed forms have no rounds");
  req.warmup_rounds = warmup_opt_->count() > 0 ? static_cast<int>(checked_integer(json(warmup_), "--warmup", 0, 100))
                                               : req.network.fidelity == Fidelity::PACKET ? 1 : 0;
  req.network.granularity =
      check("granularity", {"stepwise", "pipelined"}) == "stepwise" ? Granularity::STEPWISE : Granularity::PIPELINED;
  req.replay = check("solver", {"auto", "simgrid"}) == "auto";
  const std::string model = check("model", {"ideal", "tcp", "calibrated"});
  req.network.model = model == "ideal" ? NetworkModel::IDEAL : model == "tcp" ? NetworkModel::TCP : NetworkModel::CALIBRATED;
  for (auto* opt : {latency_factor_opt_, bandwidth_factor_opt_}) {
    const std::string key = opt->get_name().substr(2);
    if (req.network.model != NetworkModel::CALIBRATED) {
      if (opt->count() > 0)
        throw ConfigError("--" + key, fmt::format("only valid with --model calibrated, not \"{}\"", model));
      continue;
    }
    // The range of the scenario's network.latency_factor and bandwidth_factor.
    const double value = as_option(key, [&] { return flags.number(key, 1.0, MIN_MODEL_FACTOR, MAX_MODEL_FACTOR); });
    if (key == "bandwidth-factor") check_bandwidth_factor(value, "--bandwidth-factor");
    (key == "latency-factor" ? req.network.latency_factor : req.network.bandwidth_factor) = value;
  }
  // Given, even empty, it must name a routing ("" is no default).
  if (routing_opt_->count() > 0) req.routing = platforms::parse_routing(check("routing", platforms::routing_names()));
  if (req.network.fidelity == Fidelity::PACKET) {
    if (!req.routing) req.routing = platforms::Routing::SHORTEST;  // ns-3 routes by shortest paths on every topology
    check_packet_network(req.network, *req.routing, {"--model", "--software", "--routing"});
  }
  auto& registry = models::CollectiveRegistry::instance();
  for (const auto& a : algorithms_) registry.check_name(a, "--algorithms", "collective");
  req.algorithms = algorithms_;
  // Servers only for PS algorithms: one by default when --algorithms names one, else none.
  bool ps_named = false;
  for (const auto& a : algorithms_)
    ps_named = ps_named || registry.create(a, json::object(), "--algorithms", "--params", "collective")->uses_servers();
  req.servers = servers_opt_->count() > 0 ? servers : ps_named ? 1 : 0;

  (void)limits_.limits();  // --max-time and --max-memory checked before anything is built
  req.before_run = [this](const CompareWork& work) { limits_.apply(estimate_compare(work)); };
  std::vector<CompareRow> rows;
  try {
    rows = compare_collectives(req, engine_args);
  } catch (const EstimateOnly&) {
    return 0;
  }
  fmt::print("{}", format_compare(req, rows, csv_));
  if (csv_)
    for (const auto& row : rows)
      if (!row.applicable) fmt::print(stderr, "ddlsim: note: {} not run: {}\n", row.algorithm, row.note);
  return 0;
}

}  // namespace ddlsim::sim
