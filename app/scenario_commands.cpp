// ddlsim: `ddlsim validate` and `ddlsim platform` (app/scenario_commands.hpp).
#include "app/scenario_commands.hpp"

#include "app/run_command.hpp"
#include "models/error.hpp"
#include "models/logical_graph.hpp"
#include "models/sync_model.hpp"
#include "models/units.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"
#include "scenario/scenario.hpp"

#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>
#include <fstream>

namespace ddlsim::sim {

ValidateCommand::ValidateCommand(CLI::App& app) {
  command_ = app.add_subcommand("validate", "check a scenario without simulating");
  command_->add_option("scenario", scenario_file_, "scenario JSON file")->required();
  command_->add_option("--set", overrides_, "override a field before validation: PATH=VALUE")->expected(1)->take_all();
}

int ValidateCommand::run(const Invocation&) const {
  const Scenario scenario = load_scenario(scenario_file_, overrides_);
  const auto& training = scenario.training;
  const auto traits = training.sync_model->traits();
  const std::string aggregation =
      traits.uses_servers      ? fmt::format("{} on {} parameter server(s)", training.sync.name,
                                             scenario.platform.parameter_servers)
      : traits.uses_collective ? fmt::format("{} + {}", training.sync.name, training.collective.name)
                               : fmt::format("{} on a logical {} graph", training.sync.name,
                                             training.graph ? training.graph->kind() : "?");
  fmt::print("{}: valid ({} workers, {} topology with {} nodes and {} links, {})\n", scenario_file_,
             scenario.platform.workers, scenario.platform.topology, boost::num_vertices(scenario.platform.graph.graph),
             boost::num_edges(scenario.platform.graph.graph), aggregation);
  return 0;
}

PlatformCommand::PlatformCommand(CLI::App& app) {
  command_ = app.add_subcommand("platform", "build a scenario's topology and describe it");
  command_->add_option("scenario", scenario_file_, "scenario JSON file")->required();
  command_->add_option("--set", overrides_, "override a field before validation: PATH=VALUE")->expected(1)->take_all();
  dot_option_ = command_->add_option("--dot", dot_file_, "write the topology as Graphviz DOT to this file");
  command_->add_flag("--links", list_links_, "list every link: name, bandwidth, latency");
}

int PlatformCommand::run(const Invocation&) const {
  check_out_option(dot_option_, dot_file_, "no DOT file is written");
  const Scenario scenario = load_scenario(scenario_file_, overrides_);
  const auto& topo = scenario.platform.graph;
  fmt::print("topology {}: {} workers, {} parameter servers, {} nodes, {} links, host diameter {} hops\n",
             scenario.platform.topology, topo.workers.size(), topo.servers.size(), boost::num_vertices(topo.graph),
             boost::num_edges(topo.graph), platforms::host_diameter_hops(topo));
  fmt::print("routing {}\n", platforms::to_string(scenario.platform.routing));
  if (list_links_)
    for (auto e : boost::make_iterator_range(boost::edges(topo.graph)))
      fmt::print("  {:<40} {:>12} {:>10}\n", topo.graph[e].name, units::format_bandwidth(topo.graph[e].bandwidth_Bps),
                 units::format_time(topo.graph[e].latency_s));
  if (!dot_file_.empty()) {
    std::ofstream out(dot_file_);
    if (!out) throw ConfigError("", fmt::format("cannot write \"{}\"", dot_file_));
    platforms::write_dot(topo, out);
    fmt::print("wrote {}\n", dot_file_);
  }
  return 0;
}

}  // namespace ddlsim::sim
