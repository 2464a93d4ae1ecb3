// ddlsim: `ddlsim run` (app/run_command.hpp).
#include "app/run_command.hpp"

#include "scenario/run_plan.hpp"


#include "analysis/output_dir.hpp"
#include "analysis/run_outputs.hpp"
#include "analysis/summary.hpp"
#include "models/error.hpp"
#include "models/units.hpp"
#include "scenario/actor_capacity.hpp"
#include "engine/fiber_lane.hpp"
#include "app/estimate_options.hpp"
#include "app/progress.hpp"
#include "engine/run_control.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"
#include "scenario/work_estimate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace ddlsim::sim {
namespace {

/// A signal came before the simulation started: nothing is run.
struct StoppedBeforeRun {};

/// Parameter servers whose SimGrid actors cannot fit are refused at their own path, before the
/// engine exists (EngineSession::reserve_actors refuses the workers' when they are the larger
/// demand, and turns guard pages off when only that makes the actors fit).
void check_server_actors(const Scenario& s) {
  if (s.platform.parameter_servers == 0 || s.plan->fiber_lane()) return;
  const ActorDemand workers{"/platform/workers", "workers", s.platform.workers, s.plan->actors_per_worker()};
  const ActorDemand servers{"/platform/parameter_servers", "parameter servers", s.platform.parameter_servers,
                            s.plan->actors_per_server()};
  if (servers.count * servers.per_each > workers.count * workers.per_each)
    check_actor_room(workers, servers, "");
}

}  // namespace

nlohmann::json estimate_json(const WorkEstimate& e, const MachineLimits& limits) {
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& t : e.terms)
    terms.push_back({{"what", t.what}, {"path", t.path}, {"wall_s", t.wall_s}, {"memory_bytes", t.memory_bytes}});
  nlohmann::json j{{"iterations", e.iterations},
                   {"unit", e.unit},
                   {"events", e.events},
                   {"events_per_iteration", e.events_per_iteration},
                   {"flows", e.flows},
                   {"trace_events", e.trace_events},
                   {"simulated_workers", e.simulated_workers},
                   {"setup_s", e.setup_s},
                   {"per_iteration_s", e.per_iteration_s},
                   {"wall_s", e.wall_s},
                   {"memory_bytes", e.memory_bytes},
                   {"output_bytes", e.output_bytes},
                   {"terms", terms},
                   {"limits", {{"memory_bytes", limits.memory_bytes}, {"disk_bytes", limits.disk_bytes},
                               {"wall_s", limits.wall_s}}},
                   {"refused", nullptr}};
  try {
    check_work(e, limits);
  } catch (const ConfigError& error) {
    j["refused"] = error.what();
  }
  return j;
}

void check_out_option(const CLI::Option* option, const std::string& value, const std::string& without) {
  if (option->count() > 0 && value.empty())
    throw ConfigError(option->get_name(), fmt::format("expected a path, got an empty string (without the option: {})", without));
}

RunCommand::RunCommand(CLI::App& app) {
  command_ = app.add_subcommand("run", "simulate a scenario; write summary.json, iterations.csv, links.csv, timeline.json");
  command_->add_option("scenario", scenario_file_, "scenario JSON file")->required();
  command_->add_option("--set", overrides_, "override a field before validation: PATH=VALUE (dotted or /json/pointer)")
      ->expected(1)
      ->take_all();
  out_option_ = command_->add_option("--out", out_dir_, "output directory (default: the scenario's output.dir)");
  command_->add_flag("--quiet,-q", quiet_, "print neither the results table nor (without --progress) the progress");
  progress_option_ = command_->add_option(
      "--progress", progress_,
      "progress on stderr: auto (a bar on a terminal, else a line every 10 s once the run is long), bar, lines, none");
  command_->add_flag("--estimate", estimate_,
                     "print the work estimate as JSON (and whether it would be refused) instead of running");
  command_->add_option("--max-time", max_time_,
                       "refuse runs estimated to take longer than this wall time (default 3600s)");
  command_->add_option("--max-memory", max_memory_,
                       "refuse runs estimated to need more memory than this (default: what the machine has available): "
                       "8GiB, 500MB, ...");
  command_->add_flag("--every-worker", every_worker_,
                     "simulate every worker one by one, not one per class of identical workers (the outputs are the "
                     "same; slower: for checking the classes, docs/architecture.md)");
  command_->add_flag("--force", force_,
                     "run even when the work estimate exceeds the memory available, the free disk space or the "
                     "--max-time limit");
}

int RunCommand::run(const Invocation& invocation) const {
  const auto& engine_args = invocation.engine_args;

  install_stop_handlers(StopMode::GRACEFUL);
  check_out_option(out_option_, out_dir_, "the scenario's output.dir");
  const Scenario scenario = load_scenario(scenario_file_, overrides_);
  check_server_actors(scenario);
  const bool out_given = out_option_->count() > 0;
  analysis::OutputDir dir(out_given ? out_dir_ : scenario.output.dir, out_given ? "--out" : "/output/dir", scenario_file_);
  const ProgressStyle style = progress_option_->count() > 0 || !quiet_ ? parse_progress_style(progress_, "--progress")
                                                                       : ProgressStyle::NONE;
  Progress progress(style, scenario.workload.iterations);
  analysis::RunOutputs outputs(scenario, dir);

  RunOptions options;
  options.sink = &outputs;
  options.progress = [&progress](int done, int, double simulated_s) { progress.update(done, simulated_s); };
  options.stop_requested = [] { return stop_signal() != 0; };
  options.phase = [&progress](const char* what) { progress.phase(what); };
  options.every_worker = every_worker_;
  if (outputs.convergence() != nullptr) {
    options.peer_training = outputs.convergence()->peer_training();
    options.live_gains = outputs.convergence()->live_gains();
  }
  const MachineLimits limits = limits_with_options(dir.dir(), max_time_, max_memory_);
  options.before_run = [&](const WorkPlan& plan) {
    const WorkEstimate estimate = estimate_work(WorkPlan{plan.scenario, plan.plan, plan.group, plan.ab, every_worker_});
    if (estimate_) {
      fmt::print("{}\n", estimate_json(estimate, limits).dump(2));
      throw EstimateOnly{};
    }
    if (!force_) check_work(estimate, limits);
    if (stop_signal() != 0) throw StoppedBeforeRun{};
    progress.start(estimate.wall_s, estimate.events);
  };
  SimulationResult result;
  try {
    result = simulate(scenario, engine_args, options);
  } catch (const EstimateOnly&) {
    return 0;
  } catch (const StoppedBeforeRun&) {
    fmt::print(stderr, "ddlsim: {} before the simulation started: nothing written\n", signal_name(stop_signal()));
    return 128 + stop_signal();
  }
  progress.finish();
  if (result.engine_abandoned) exit_without_static_cleanup();
  const int signal = stop_signal();
  for (const auto& note : result.notes) fmt::print(stderr, "ddlsim: note: {}\n", note);
  if (result.totals.iterations == 0) {
    fmt::print(stderr, "ddlsim: {} before any iteration completed: nothing written\n", signal_name(signal));
    return 128 + signal;
  }
  const auto summary = analysis::summarize(scenario, result);
  auto document = analysis::to_json(scenario, result, summary);
  document["complete"] = !result.stopped;
  document["stopped_by"] = result.stopped ? nlohmann::json(signal_name(signal)) : nlohmann::json(nullptr);
  if (outputs.convergence() != nullptr) {
    outputs.convergence()->finish(result);
    document["convergence"] = outputs.convergence()->summary();
  }
  outputs.finish(result, document);
  if (!quiet_) {
    fmt::print("{}", analysis::format_table(scenario, result, summary));
    if (outputs.convergence() != nullptr) fmt::print("{}", outputs.convergence()->table());
    fmt::print("wrote {}/{}\n", dir.dir(), fmt::join(outputs.written(), ", "));
  }
  if (result.stopped)
    fmt::print(stderr, "ddlsim: stopped by {} after {} of {} iterations: {}/summary.json is marked incomplete\n",
               signal_name(signal), result.totals.iterations, scenario.workload.iterations, dir.dir());
  return signal != 0 ? 128 + signal : 0;
}

}  // namespace ddlsim::sim
