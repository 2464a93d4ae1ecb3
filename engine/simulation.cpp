#include "engine/simulation.hpp"

#include "scenario/run_plan.hpp"

#include "models/compressor.hpp"
#include "engine/s4u_emitter.hpp"
#include "scenario/analytic_network.hpp"
#include "scenario/collective_group.hpp"
#include "engine/context.hpp"
#include "engine/engine.hpp"
#include "engine/fiber_lane.hpp"
#include "engine/flow_bounds.hpp"
#include "engine/link_bytes.hpp"
#include "engine/ns3_binding.hpp"
#include "engine/schedule_executor.hpp"
#include "scenario/work_estimate.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <queue>
#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u.hpp>
#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

/// Installs the scenario's link traces (SimGrid profiles) on a link before it is sealed.
platforms::LinkConfigurator link_traces(const NetworkSpec& net, const platforms::Graph& g) {
  if (net.link_traces.empty()) return {};
  return [&net, &g, counter = 0](const platforms::Edge& e, sg4::Link* link) mutable {
    const auto& edge = g[e];
    const auto [bandwidth, latency] = link_trace_of(net.link_traces, edge.name);  // scenario/scenario.hpp
    if (bandwidth != nullptr) {
      // SimGrid 3.32 applies profile values as absolute bandwidths (in payload units per second).
      std::string text;
      for (const auto& [t, bw] : bandwidth->bandwidth_Bps) text += fmt::format("{} {}\n", t, bw * byte_scale());
      link->set_bandwidth_profile(simgrid::kernel::profile::ProfileBuilder::from_string(
          fmt::format("bw-{}", counter++), text, bandwidth->period_s));
    }
    if (latency != nullptr) {
      std::string text;
      for (const auto& [t, lat] : latency->latency_s) text += fmt::format("{} {}\n", t, lat);
      link->set_latency_profile(simgrid::kernel::profile::ProfileBuilder::from_string(
          fmt::format("lat-{}", counter++), text, latency->period_s));
    }
  };
}

}  // namespace


namespace detail {

void prepare_context(RunState& ctx, const Scenario& scenario, const RunOptions& options) {
  const RunPlan& plan = *scenario.plan;  // decided when the scenario was loaded (scenario/run_plan.hpp)
  ctx.scenario = &scenario;
  ctx.options = &options;
  ctx.plan = plan.training;
  ctx.plan.profile = &scenario.workload.worker.profile;
  ctx.group = plan.group;
  ctx.network = std::make_unique<AnalyticNetwork>(*plan.network);  // this run's copy: at() extends it
  ctx.ab = plan.ab;
  if (ctx.analytic() && scenario.training.sync_model->traits().uses_collective) {  // links.csv (engine/analytic_links.hpp)
    if (AnalyticLinks::countable(ctx.group)) {
      const auto& software = scenario.network.software;
      ctx.analytic_links = std::make_unique<AnalyticLinks>(scenario.platform.graph, scenario.platform.routing,
                                                           scenario.seed, software ? software->protocol_efficiency : 1.0);
    } else {
      ctx.result.links_omitted = fmt::format(
          "links.csv left out: at analytic fidelity the collectives' bytes are routed on the platform for groups of "
          "at most {} ranks (this one has {}); use flow fidelity for per-link traffic",
          AnalyticLinks::MAX_RANKS, ctx.group.size());
      ctx.result.notes.push_back(ctx.result.links_omitted);
    }
  }
  ctx.launch_wait_s = plan.launch_wait_s;
  for (const auto& note : plan.notes) ctx.result.notes.push_back(note);
  ctx.result.compression = ctx.plan.compression;
  ctx.variant_cr = plan.variant_cr;
  if (const auto& adaptive = scenario.training.adaptive; adaptive.enabled) {
    const double compute_s = scenario.workload.worker.profile.iteration_compute_s();
    if (adaptive.live_gain && options.live_gains == nullptr)
      throw std::invalid_argument("adaptive compression with live gains: RunOptions::live_gains is not set");
    ctx.adaptive = std::make_unique<detail::AdaptiveRun>(
        adaptive.live_gain ? models::AdaptiveController(adaptive.settings, options.live_gains, compute_s)
                           : models::AdaptiveController(adaptive.settings, *adaptive.gain, compute_s));
  }
  for (const auto& b : ctx.plan.buckets) ctx.result.bucket_bytes.push_back(b.bytes);
  ctx.result.collective_choices = plan.collective_choices;
  ctx.result.protocol_choices = plan.protocol_choices;
  ctx.static_cr = plan.static_cr;
  ctx.graph = scenario.training.graph;
  ctx.workers.resize(static_cast<std::size_t>(scenario.platform.workers));
  ctx.result.workers.resize(static_cast<std::size_t>(scenario.platform.workers));
  ctx.records.by_worker.resize(static_cast<std::size_t>(scenario.platform.workers));
  ctx.result.alpha_s = ctx.ab.alpha_s;
  ctx.result.beta_s_per_byte = ctx.ab.beta_s_per_byte;
  ctx.result.analytic_local = ctx.ab.local;
  ctx.result.buckets = static_cast<int>(ctx.plan.buckets.size());
  if (options.before_run) options.before_run(WorkPlan{scenario, ctx.plan, ctx.group, ctx.ab});
}

}  // namespace detail

SimulationResult simulate(const Scenario& scenario, const std::vector<std::string>& engine_args,
                          const RunOptions& options) {
  if (!options.simgrid_analytic && scenario.plan->fiber_lane()) return detail::simulate_on_fibers(scenario, options);
  // On the heap: a run stopped within an iteration leaves them to the process's end (run_stoppable).
  auto session_owner = std::make_unique<EngineSession>(engine_args, scenario.network);
  EngineSession& session = *session_owner;
  const auto& sync = *scenario.training.sync_model;
  // Before building anything: refuse (or make room for) more actors than the process can hold.
  const RunPlan& plan = *scenario.plan;
  std::vector<std::string> notes;
  if (auto note = session.reserve_actors(scenario.platform.workers, static_cast<int>(plan.actors_per_worker()),
                                         scenario.platform.parameter_servers * static_cast<int>(plan.actors_per_server()));
      !note.empty())
    notes.push_back(std::move(note));
  FlowBounds::install(scenario.network);
  LinkBytes::reset();

  auto ctx_owner = std::make_unique<detail::Context>();
  detail::Context& ctx = *ctx_owner;
  detail::prepare_context(ctx, scenario, options);
  ctx.sim_workers.resize(ctx.workers.size());
  for (auto& worker : ctx.sim_workers) {
    worker.queued = sg4::Semaphore::create(0);
    worker.drained = sg4::Semaphore::create(0);
  }
  if (options.phase) options.phase("building the platform");
  ctx.platform = platforms::emit_platform(scenario.platform.graph, byte_scale(),
                                         link_traces(scenario.network, scenario.platform.graph.graph),
                                         scenario.platform.routing, scenario.seed);
  if (scenario.network.fidelity == Fidelity::PACKET) ns3_binding::platform_created(scenario.network.packet);
  ctx.executor = std::make_unique<ScheduleExecutor>(detail::channel_hosts(ctx), executor_network(scenario.network));
  ctx.comm_barrier = sg4::Barrier::create(static_cast<unsigned>(scenario.platform.workers));
  ctx.end_barrier = sg4::Barrier::create(static_cast<unsigned>(scenario.platform.workers));
  if (ctx.adaptive) ctx.adaptive_barrier = sg4::Barrier::create(static_cast<unsigned>(scenario.platform.workers));
  if (sync.traits().uses_servers) {
    // Pushes and pulls on the fluid links where they share as SimGrid's LMM would (engine/fluid_ps.hpp).
    std::string why = detail::FluidPs::ineligible(ctx, engine_args);
    if (why.empty()) ctx.fluid_ps = detail::FluidPs::create(ctx, why);
    ctx.result.push_pull_solver = ctx.fluid_ps ? "fluid" : "simgrid";
    ctx.result.push_pull_solver_reason = why;
  }
  for (int s = 0; s < scenario.platform.parameter_servers; ++s) {
    auto& boxes = ctx.push_boxes.emplace_back();
    for (int w = 0; w < scenario.platform.workers; ++w) boxes.push_back(sg4::Mailbox::by_name(fmt::format("push:{}<{}", s, w)));
  }

  ctx.result.notes.insert(ctx.result.notes.begin(), notes.begin(), notes.end());
  for (int r = 0; r < scenario.platform.workers; ++r) {
    auto* host = ctx.platform.hosts[static_cast<std::size_t>(r)];
    auto worker = sg4::Actor::create(fmt::format("worker-{}", r), host,
                                     session.guard([&ctx, &sync, r]() { detail::run_worker(ctx, r, sync); }));
    // One-sided puts to this worker flow without a receive (engine/point_to_point.hpp).
    sg4::Mailbox::by_name(fmt::format("put>{}", r))->set_receiver(worker);
    for (int slot = 0; slot < plan.streams_per_worker; ++slot)
      sg4::Actor::create(slot == 0 ? fmt::format("comm-{}", r) : fmt::format("comm-{}.{}", r, slot), host,
                         session.guard([&ctx, r, slot]() { detail::comm_stream(ctx, r, slot); }))
          ->daemonize();
  }
  for (int s = 0; s < scenario.platform.parameter_servers; ++s) {
    auto* host = ctx.platform.hosts[static_cast<std::size_t>(scenario.platform.workers + s)];
    if (plan.server_loops)
      sg4::Actor::create(fmt::format("ps-{}", s), host,
                         session.guard([&ctx, &sync, s]() { detail::run_server(ctx, s, sync); }));
    if (plan.collective_servers) {
      ctx.collective_jobs.emplace_back();
      ctx.collective_ready.push_back(sg4::Semaphore::create(0));
      sg4::Actor::create(fmt::format("ps-collective-{}", s), host,
                         session.guard([&ctx, s]() { detail::collective_server(ctx, s); }))
          ->daemonize();
    }
  }
  if (options.phase) options.phase(nullptr);
  const bool abandoned = session.run_stoppable();
  session.rethrow_if_failed();
  ctx.result.stopped = session.stopped();
  if (!ctx.result.stopped) {
    if (session.deadlocked()) throw std::runtime_error("the simulation deadlocked (sends and receives do not match)");
    detail::check_records_complete(ctx);
  }
  ctx.result.makespan_s = sg4::Engine::get_clock();
  if (ctx.adaptive) {
    ctx.result.explorations = ctx.adaptive->controller.explorations();
    for (const auto& p : ctx.adaptive->probes) ctx.result.probes.push_back({p.alpha_s, p.beta_s_per_byte});
  }
  const auto halves = detail::link_halves(ctx.platform);
  detail::collect_links(ctx.result, scenario.platform.graph, &halves,
                        ctx.analytic_links ? &ctx.analytic_links->bytes() : nullptr);
  if (abandoned) {
    ctx.result.engine_abandoned = true;
    (void)ctx_owner.release();      // deliberately kept: actors still wait on what it holds
    (void)session_owner.release();  // and on the engine
  }
  return std::move(ctx.result);
}

}  // namespace ddlsim::sim
