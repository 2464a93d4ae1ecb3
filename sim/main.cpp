// ddlsim: the command-line interface. Wiring only: parse options, load and
// validate the scenario, run the simulation, write outputs.
//
// Exit codes: 0 success, 2 bad input (nothing written), 1 internal error.
// SimGrid's own --cfg=... and --log=... flags pass through to the engine.
#include "analysis/summary.hpp"
#include "models/collective.hpp"
#include "models/compressor.hpp"
#include "models/sync_model.hpp"
#include "platforms/topology.hpp"
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

namespace {

constexpr int EXIT_BAD_INPUT = 2;
constexpr int EXIT_INTERNAL = 1;

template <class Interface>
void list_registry(const std::string& title) {
  fmt::print("{}:\n", title);
  for (const auto* entry : ddlsim::Registry<Interface>::instance().entries())
    fmt::print("  {:<22} {}\n", entry->name, entry->description);
}

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
             "Exit codes: 0 success, 2 bad input, 1 internal error.");

  std::string scenario_file, out_dir, dot_file;
  std::vector<std::string> overrides;
  bool quiet = false;

  auto* run = app.add_subcommand("run", "simulate a scenario and write OUT/summary.json");
  run->add_option("scenario", scenario_file, "scenario JSON file")->required();
  run->add_option("--set", overrides, "override a field before validation: PATH=VALUE (dotted or /json/pointer)")
      ->take_all();
  run->add_option("--out", out_dir, "output directory (default: the scenario's output.dir)");
  run->add_flag("--quiet,-q", quiet, "do not print the results table");

  auto* validate = app.add_subcommand("validate", "check a scenario without simulating");
  validate->add_option("scenario", scenario_file, "scenario JSON file")->required();
  validate->add_option("--set", overrides, "override a field before validation: PATH=VALUE")->take_all();

  auto* list = app.add_subcommand("list", "list every registered topology, sync model, collective and compressor");

  auto* platform = app.add_subcommand("platform", "build a scenario's topology and describe it");
  platform->add_option("scenario", scenario_file, "scenario JSON file")->required();
  platform->add_option("--set", overrides, "override a field before validation: PATH=VALUE")->take_all();
  platform->add_option("--dot", dot_file, "write the topology as Graphviz DOT to this file");

  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : EXIT_BAD_INPUT;
  }

  if (list->parsed()) {
    list_registry<ddlsim::platforms::TopologyBuilder>("topologies");
    list_registry<ddlsim::models::SyncModel>("sync models");
    list_registry<ddlsim::models::Collective>("collectives");
    list_registry<ddlsim::models::Compressor>("compressors");
    return 0;
  }

  const ddlsim::sim::Scenario scenario = ddlsim::sim::load_scenario(scenario_file, overrides);

  if (validate->parsed()) {
    fmt::print("{}: valid ({} workers, {} topology with {} nodes and {} links, {} + {})\n", scenario_file,
               scenario.platform.workers, scenario.platform.topology, boost::num_vertices(scenario.platform.graph.graph),
               boost::num_edges(scenario.platform.graph.graph), scenario.training.sync.name,
               scenario.training.collective.name);
    return 0;
  }
  if (platform->parsed()) {
    const auto& topo = scenario.platform.graph;
    fmt::print("topology {}: {} workers, {} parameter servers, {} nodes, {} links, host diameter {} hops\n",
               scenario.platform.topology, topo.workers.size(), topo.servers.size(), boost::num_vertices(topo.graph),
               boost::num_edges(topo.graph), ddlsim::platforms::host_diameter_hops(topo));
    if (!dot_file.empty()) {
      std::ofstream out(dot_file);
      if (!out) throw ddlsim::ConfigError("", fmt::format("cannot write \"{}\"", dot_file));
      ddlsim::platforms::write_dot(topo, out);
      fmt::print("wrote {}\n", dot_file);
    }
    return 0;
  }

  // run
  const std::string dir = out_dir.empty() ? scenario.output.dir : out_dir;
  const auto result = ddlsim::sim::simulate(scenario, engine_args);
  const auto summary = ddlsim::analysis::summarize(scenario, result);
  ddlsim::analysis::write_outputs(dir, ddlsim::analysis::to_json(scenario, result, summary));
  if (!quiet) {
    fmt::print("{}", ddlsim::analysis::format_table(scenario, result, summary));
    fmt::print("wrote {}/summary.json\n", dir);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const ddlsim::ConfigError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return EXIT_BAD_INPUT;
  } catch (const std::exception& e) {
    std::cerr << "ddlsim: internal error: " << e.what() << "\n";
    return EXIT_INTERNAL;
  }
}
