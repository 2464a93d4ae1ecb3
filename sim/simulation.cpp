#include "sim/simulation.hpp"

#include "platforms/s4u_emitter.hpp"
#include "sim/engine.hpp"
#include "sim/schedule_executor.hpp"

#include <boost/graph/graph_traits.hpp>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <queue>
#include <simgrid/s4u.hpp>
#include <stdexcept>

XBT_LOG_NEW_DEFAULT_CATEGORY(ddlsim, "ddlsim simulation");

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

/// Shared state of one simulation. SimGrid runs actors one at a time in one
/// thread (contexts/nthreads=1), so plain containers are safe here.
struct Context {
  const Scenario* scenario = nullptr;
  models::CollectiveGroup group;
  models::AlphaBeta ab;
  platforms::EmittedPlatform platform;
  std::unique_ptr<ScheduleExecutor> executor;
  sg4::BarrierPtr barrier;
  std::vector<std::deque<double>> server_jobs;  // bytes of each collective a server must serve
  std::vector<sg4::SemaphorePtr> server_ready;
  SimulationResult result;
};

void add_traffic(const TrafficCounters& c, double& bytes, std::int64_t& messages) {
  bytes += c.bytes_sent;
  messages += c.messages_sent;
}

class SimRuntime final : public models::Runtime {
 public:
  SimRuntime(Context& ctx, int rank) : ctx_(ctx), rank_(rank), rng_(ctx.scenario->seed * 1'000'003ULL + static_cast<std::uint64_t>(rank)) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int workers() const override { return ctx_.group.workers; }
  [[nodiscard]] double now() const override { return sg4::Engine::get_clock(); }
  std::mt19937_64& rng() override { return rng_; }

  void compute(double seconds, models::Phase, const std::string&) override {
    if (seconds <= 0) return;
    sg4::this_actor::sleep_for(seconds);
    current().compute_s += seconds;
  }

  void allreduce(double bytes, const std::string&) override {
    const double t0 = now();
    WorkerRecord& rec = record();
    const auto& coll = *ctx_.scenario->training.collective_algorithm;
    if (rank_ == 0)
      for (std::size_t s = 0; s < ctx_.server_jobs.size(); ++s) {
        ctx_.server_jobs[s].push_back(bytes);
        ctx_.server_ready[s]->release();
      }
    if (ctx_.scenario->network.fidelity == Fidelity::ANALYTIC) {
      ctx_.barrier->wait();
      add_traffic(schedule_traffic(coll.rank_phases(rank_, ctx_.group, bytes)), rec.bytes_sent, rec.messages_sent);
      sg4::this_actor::sleep_for(coll.analytic_time_s(ctx_.group, bytes, ctx_.ab));
    } else {
      const bool stepwise = ctx_.scenario->network.granularity == Granularity::STEPWISE;
      auto steps = stepwise ? coll.rank_schedule(rank_, ctx_.group, bytes) : coll.rank_phases(rank_, ctx_.group, bytes);
      TrafficCounters traffic;
      ctx_.executor->run(rank_, steps, traffic);
      add_traffic(traffic, rec.bytes_sent, rec.messages_sent);
    }
    current().communication_s += now() - t0;
  }

  void iteration_begin(int) override { record().iterations.push_back(IterationRecord{now(), now(), 0, 0}); }
  void iteration_end(int) override { current().end_s = now(); }

 private:
  WorkerRecord& record() { return ctx_.result.workers[static_cast<std::size_t>(rank_)]; }
  IterationRecord& current() { return record().iterations.back(); }

  Context& ctx_;
  int rank_;
  std::mt19937_64 rng_;
};

/// A parameter server: serves each collective that rank 0 announces, in order.
void server_loop(Context& ctx, int server) {
  const int rank = ctx.group.workers + server;
  const auto& coll = *ctx.scenario->training.collective_algorithm;
  const bool analytic = ctx.scenario->network.fidelity == Fidelity::ANALYTIC;
  const bool stepwise = ctx.scenario->network.granularity == Granularity::STEPWISE;
  auto s = static_cast<std::size_t>(server);
  while (true) {
    ctx.server_ready[s]->acquire();
    const double bytes = ctx.server_jobs[s].front();
    ctx.server_jobs[s].pop_front();
    TrafficCounters traffic;
    if (analytic) {
      traffic = schedule_traffic(coll.rank_phases(rank, ctx.group, bytes));
    } else {
      auto steps = stepwise ? coll.rank_schedule(rank, ctx.group, bytes) : coll.rank_phases(rank, ctx.group, bytes);
      ctx.executor->run(rank, steps, traffic);
    }
    add_traffic(traffic, ctx.result.bytes_sent_by_servers, ctx.result.messages_sent_by_servers);
  }
}

}  // namespace

models::AlphaBeta analytic_alpha_beta(const platforms::Topology& topo) {
  const auto& g = topo.graph;
  const auto n = boost::num_vertices(g);
  std::vector<int> hops(n, -1);
  std::vector<double> lat(n, 0.0);
  std::queue<platforms::Vertex> queue;
  const auto src = topo.workers.front();
  hops[src] = 0;
  queue.push(src);
  double min_bw = std::numeric_limits<double>::infinity();
  while (!queue.empty()) {
    auto v = queue.front();
    queue.pop();
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      auto w = boost::target(e, g);
      min_bw = std::min(min_bw, g[e].bandwidth_Bps);
      if (hops[w] < 0) {
        hops[w] = hops[v] + 1;
        lat[w] = lat[v] + g[e].latency_s;
        queue.push(w);
      }
    }
  }
  models::AlphaBeta ab;
  for (auto v : topo.workers) ab.alpha_s = std::max(ab.alpha_s, lat[v]);
  for (auto v : topo.servers) ab.alpha_s = std::max(ab.alpha_s, lat[v]);
  ab.beta_s_per_byte = std::isfinite(min_bw) ? 1.0 / min_bw : 0.0;
  return ab;
}

SimulationResult simulate(const Scenario& scenario, const std::vector<std::string>& engine_args) {
  EngineSession session(engine_args, scenario.network);

  Context ctx;
  ctx.scenario = &scenario;
  ctx.group = models::CollectiveGroup{scenario.platform.workers, scenario.platform.parameter_servers};
  ctx.ab = analytic_alpha_beta(scenario.platform.graph);
  ctx.platform = platforms::emit_platform(scenario.platform.graph, BYTE_SCALE);
  ctx.executor = std::make_unique<ScheduleExecutor>(ctx.platform.hosts);
  ctx.barrier = sg4::Barrier::create(static_cast<unsigned>(scenario.platform.workers));
  ctx.result.workers.resize(static_cast<std::size_t>(scenario.platform.workers));
  ctx.result.alpha_s = ctx.ab.alpha_s;
  ctx.result.beta_s_per_byte = ctx.ab.beta_s_per_byte;

  models::TrainingPlan plan{&scenario.workload.profile, scenario.workload.iterations};
  for (int r = 0; r < scenario.platform.workers; ++r)
    sg4::Actor::create(fmt::format("worker-{}", r), ctx.platform.hosts[static_cast<std::size_t>(r)], [&ctx, &plan, r]() {
      SimRuntime runtime(ctx, r);
      ctx.scenario->training.sync_model->run_worker(runtime, plan);
    });
  if (scenario.training.collective_algorithm->uses_servers()) {
    ctx.server_jobs.resize(static_cast<std::size_t>(scenario.platform.parameter_servers));
    for (int s = 0; s < scenario.platform.parameter_servers; ++s) {
      ctx.server_ready.push_back(sg4::Semaphore::create(0));
      auto host = ctx.platform.hosts[static_cast<std::size_t>(scenario.platform.workers + s)];
      sg4::Actor::create(fmt::format("ps-{}", s), host, [&ctx, s]() { server_loop(ctx, s); })->daemonize();
    }
  }
  session.engine().run();
  if (session.deadlocked()) throw std::runtime_error("the simulation deadlocked (a collective's sends and receives do not match)");
  ctx.result.makespan_s = sg4::Engine::get_clock();
  return std::move(ctx.result);
}

}  // namespace ddlsim::sim
