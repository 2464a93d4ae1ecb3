// ddlsim: the command-line interface. Wiring only: parse options, load and
// validate the scenario, run the simulation, write outputs.
//
// Exit codes: 0 success, 2 bad input (nothing written), 1 internal error, 130 and 143 on
// SIGINT and SIGTERM (engine/run_control.hpp).
// SimGrid's own --cfg=... and --log=... flags pass through to the engine.
#include "analysis/summary.hpp"
#include "models/collective.hpp"
#include "models/compressor.hpp"
#include "models/sync_model.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"
#include "models/units.hpp"
#include "app/calibrate_command.hpp"
#include "app/collectives_command.hpp"
#include "app/estimate_options.hpp"
#include "app/list_command.hpp"
#include "models/logical_graph.hpp"
#include "scenario/scenario.hpp"
#include "app/run_command.hpp"
#include "engine/run_control.hpp"
#include "app/schedule_command.hpp"
#include "engine/simulation.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace {

constexpr int EXIT_BAD_INPUT = 2;
constexpr int EXIT_INTERNAL = 1;

int run_cli(int argc, char** argv) {
  // Split SimGrid's flags from ours.
  std::vector<std::string> engine_args;
  std::vector<char*> ours;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i > 0 && (a.rfind("--cfg=", 0) == 0 || a.rfind("--log=", 0) == 0)) engine_args.push_back(a);
    else ours.push_back(argv[i]);
  }

  CLI::App app{"ddlsim: discrete-event simulator of distributed deep-learning training"};
  app.set_version_flag("--version", std::string("ddlsim ") + DDLSIM_VERSION);
  app.require_subcommand(1);
  app.footer("SimGrid flags (--cfg=name:value, --log=category.thres:level) are passed to the engine.\n"
             "Exit codes: 0 success, 2 bad input, 1 internal error, 130 on SIGINT, 143 on SIGTERM.");

  std::string scenario_file, dot_file;
  std::vector<std::string> overrides;

  const ddlsim::sim::RunCommand run(app);

  auto* validate = app.add_subcommand("validate", "check a scenario without simulating");
  validate->add_option("scenario", scenario_file, "scenario JSON file")->required();
  validate->add_option("--set", overrides, "override a field before validation: PATH=VALUE")->expected(1)->take_all();

  auto* list = app.add_subcommand("list", "list every name a scenario can give: topologies, sync models, collectives, "
                                          "compressors, software presets, bucketing policies, graphs, routings, ...");

  auto* platform = app.add_subcommand("platform", "build a scenario's topology and describe it");
  platform->add_option("scenario", scenario_file, "scenario JSON file")->required();
  platform->add_option("--set", overrides, "override a field before validation: PATH=VALUE")->expected(1)->take_all();
  auto* dot_opt = platform->add_option("--dot", dot_file, "write the topology as Graphviz DOT to this file");
  bool list_links = false;
  platform->add_flag("--links", list_links, "list every link: name, bandwidth, latency");

  const ddlsim::sim::CollectivesCommand collectives(app);

  auto* sched = app.add_subcommand("schedule", "print every rank's point-to-point steps of one collective call as JSON");
  ddlsim::sim::ScheduleRequest s_request;
  std::string s_bytes, s_params = "{}", s_granularity = "stepwise", s_bandwidth, s_latency;
  int s_servers = 0;
  sched->add_option("--algorithm,-a", s_request.algorithm, "collective algorithm (ddlsim list)")->required();
  sched->add_option("--workers,-n", s_request.workers, "number of workers N")->required();
  auto* s_servers_opt = sched->add_option("--servers", s_servers,
                                          "parameter servers S (ranks N..N+S-1); default 1 for ps-like algorithms, else 0");
  sched->add_option("--bytes,-m", s_bytes, "size M as the algorithm counts it: 1MiB, 64KiB, or a bare number of bytes")
      ->required();
  sched->add_option("--params", s_params, "the algorithm's parameters as JSON, e.g. '{\"segments\": 2}'")
      ->capture_default_str();
  sched->add_option("--granularity", s_granularity, "stepwise (every step) or pipelined (merged phases)")
      ->capture_default_str();
  sched->add_option("--bandwidth,-b", s_bandwidth, "with --latency: a network for auto to pick by; adds analytic_time_s");
  sched->add_option("--latency,-l", s_latency, "with --bandwidth: the path latency");
  ddlsim::sim::EstimateOptions s_limits;
  s_limits.add_to(sched, "schedules");

  const ddlsim::sim::CalibrateCommand calibrate(app);

  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: CLI11 prints them
    // Any other option error is bad input: one line, like every other (docs/reliability.md).
    std::string where = "ddlsim";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    const ddlsim::ConfigError error(where, std::string(e.what()) + " (`" + where + " --help` lists the options)");
    std::cerr << "ddlsim: error: " << error.what() << "\n";
    return EXIT_BAD_INPUT;
  }

  if (list->parsed()) {
    ddlsim::sim::print_lists();
    return 0;
  }

  if (calibrate.parsed()) return calibrate.run(std::vector<std::string>(ours.begin(), ours.end()));
  if (run.parsed()) return run.run(engine_args);

  if (sched->parsed()) {
    namespace units = ddlsim::units;
    s_request.bytes = units::cli_bytes(s_bytes, "--bytes");
    if (s_servers_opt->count() > 0) s_request.servers = s_servers;
    s_request.params = ddlsim::parse_json_option(s_params, "--params");
    if (s_granularity != "stepwise" && s_granularity != "pipelined")
      throw ddlsim::ConfigError("--granularity", fmt::format("expected stepwise or pipelined, got \"{}\"", s_granularity));
    s_request.pipelined = s_granularity == "pipelined";
    if (!s_bandwidth.empty()) s_request.bandwidth_Bps = units::cli_bandwidth_Bps(s_bandwidth, "--bandwidth");
    if (!s_latency.empty()) s_request.latency_s = units::cli_latency_s(s_latency, "--latency");
    (void)s_limits.limits();  // --max-time and --max-memory checked first
    s_request.before_build = [&s_limits](const ddlsim::sim::WorkEstimate& e) { s_limits.apply(e); };
    try {
      fmt::print("{}\n", ddlsim::sim::schedule_document(s_request).dump());
    } catch (const ddlsim::sim::EstimateOnly&) {
    }
    return 0;
  }

  if (collectives.parsed()) return collectives.run(engine_args);

  if (platform->parsed()) ddlsim::sim::check_out_option(dot_opt, dot_file, "no DOT file is written");
  const ddlsim::sim::Scenario scenario = ddlsim::sim::load_scenario(scenario_file, overrides);

  if (validate->parsed()) {
    const auto& sync = *scenario.training.sync_model;
    const std::string aggregation =
        sync.traits().uses_servers      ? fmt::format("{} on {} parameter server(s)", scenario.training.sync.name,
                                               scenario.platform.parameter_servers)
        : sync.traits().uses_collective ? fmt::format("{} + {}", scenario.training.sync.name, scenario.training.collective.name)
                                 : fmt::format("{} on a logical {} graph", scenario.training.sync.name,
                                               scenario.training.graph ? scenario.training.graph->kind() : "?");
    fmt::print("{}: valid ({} workers, {} topology with {} nodes and {} links, {})\n", scenario_file,
               scenario.platform.workers, scenario.platform.topology, boost::num_vertices(scenario.platform.graph.graph),
               boost::num_edges(scenario.platform.graph.graph), aggregation);
    return 0;
  }
  if (platform->parsed()) {
    const auto& topo = scenario.platform.graph;
    fmt::print("topology {}: {} workers, {} parameter servers, {} nodes, {} links, host diameter {} hops\n",
               scenario.platform.topology, topo.workers.size(), topo.servers.size(), boost::num_vertices(topo.graph),
               boost::num_edges(topo.graph), ddlsim::platforms::host_diameter_hops(topo));
    fmt::print("routing {}\n", ddlsim::platforms::to_string(scenario.platform.routing));
    if (list_links)
      for (auto e : boost::make_iterator_range(boost::edges(topo.graph)))
        fmt::print("  {:<40} {:>12} {:>10}\n", topo.graph[e].name,
                   ddlsim::units::format_bandwidth(topo.graph[e].bandwidth_Bps),
                   ddlsim::units::format_time(topo.graph[e].latency_s));
    if (!dot_file.empty()) {
      std::ofstream out(dot_file);
      if (!out) throw ddlsim::ConfigError("", fmt::format("cannot write \"{}\"", dot_file));
      ddlsim::platforms::write_dot(topo, out);
      fmt::print("wrote {}\n", dot_file);
    }
    return 0;
  }

  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT and SIGTERM exit at once with 128 + the signal; `run` stops cleanly instead.
  ddlsim::sim::install_stop_handlers(ddlsim::sim::StopMode::EXIT);
  try {
    const int code = run_cli(argc, argv);
    if (ddlsim::sim::static_cleanup_skipped()) {  // a run stopped within an iteration (engine/run_control.hpp)
      std::fflush(nullptr);
      std::_Exit(code);
    }
    return code;
  } catch (const ddlsim::ConfigError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return EXIT_BAD_INPUT;
  } catch (const std::exception& e) {
    std::cerr << "ddlsim: internal error: " << e.what() << "\n";
    return EXIT_INTERNAL;
  }
}
