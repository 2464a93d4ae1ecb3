#include "sim/simulation.hpp"

#include "platforms/s4u_emitter.hpp"
#include "sim/engine.hpp"
#include "sim/schedule_executor.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <queue>
#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/plugins/load.h>
#include <simgrid/s4u.hpp>
#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

/// A gradient push to a parameter server, or its answer (the pull).
struct PsMessage {
  int worker = 0;
  int bucket = 0;
  double bytes = 0;
  std::int64_t version = 0;
  int iteration = 0;  // the pushing worker's iteration (for the timeline)
};

struct QueuedComm {
  models::CommRequest request;
  int iteration = 0;
  double submit_s = 0;  // simulated time of the submit (the compute actor sleeps lazily)
};

/// Per-worker state shared by its compute actor and its communication-stream actor.
struct WorkerState {
  std::deque<QueuedComm> queue;
  sg4::SemaphorePtr queued = sg4::Semaphore::create(0);
  sg4::SemaphorePtr drained = sg4::Semaphore::create(0);  // released once when a waiter waits for the stream
  int outstanding = 0;                                     // submitted and not finished
  bool waiting = false;
  std::vector<QueuedComm> analytic_pending;  // analytic fidelity: all-reduces resolved at wait_comm
  std::map<int, TrafficCounters> analytic_traffic;  // per bucket: what its all-reduce sends (same every iteration)
  std::map<std::pair<int, int>, std::int64_t> seen_version;  // (server, bucket) -> version last pulled
};

/// Analytic fidelity: each iteration's per-bucket latest arrival over all workers.
struct AnalyticRound {
  std::vector<double> arrival;
  int readers = 0;
};

/// Shared state of one simulation. SimGrid runs actors one at a time in one
/// thread (contexts/nthreads=1), so plain containers are safe here.
struct Context {
  const Scenario* scenario = nullptr;
  models::TrainingPlan plan;
  models::CollectiveGroup group;
  models::AlphaBeta ab;
  platforms::EmittedPlatform platform;
  std::unique_ptr<ScheduleExecutor> executor;
  sg4::BarrierPtr comm_barrier;                       // analytic fidelity: all communication streams
  std::vector<WorkerState> workers;
  std::vector<std::deque<double>> collective_jobs;   // per server: collectives (bytes) it must serve
  std::vector<sg4::SemaphorePtr> collective_ready;
  std::vector<sg4::Mailbox*> push_boxes;             // per server
  std::map<int, AnalyticRound> rounds;               // analytic fidelity, by iteration
  ProgressCallback progress;
  SimulationResult result;

  [[nodiscard]] bool analytic() const { return scenario->network.fidelity == Fidelity::ANALYTIC; }
  [[nodiscard]] bool stepwise() const { return scenario->network.granularity == Granularity::STEPWISE; }
  sg4::Mailbox* pull_box(int server, int worker) {
    return sg4::Mailbox::by_name(fmt::format("pull:{}>{}", server, worker));
  }
  [[nodiscard]] bool traced(int pid, int iteration) const {
    return scenario->output.timeline && iteration < scenario->output.timeline_iterations &&
           (pid < scenario->output.timeline_workers || pid >= group.workers);
  }
  void trace(int pid, int tid, std::string name, std::string category, double start, double duration) {
    result.timeline.push_back(TraceEvent{pid, tid, std::move(name), std::move(category), start, duration});
  }
};

std::uint64_t units_of(double bytes) { return static_cast<std::uint64_t>(std::llround(bytes * BYTE_SCALE)); }

void add_traffic(const TrafficCounters& c, double& bytes, std::int64_t& messages) {
  bytes += c.bytes_sent;
  messages += c.messages_sent;
}

/// The worker-side Runtime: compute is accumulated and slept lazily (only
/// when the worker interacts with communication), which is exact because
/// compute touches nothing shared, and keeps per-layer replay cheap.
class SimRuntime final : public models::Runtime {
 public:
  SimRuntime(Context& ctx, int rank)
      : ctx_(ctx), rank_(rank), rng_(ctx.scenario->seed * 1'000'003ULL + static_cast<std::uint64_t>(rank)) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int workers() const override { return ctx_.group.workers; }
  [[nodiscard]] int servers() const override { return ctx_.group.servers; }
  double now() override { return sg4::Engine::get_clock() + debt_; }

  void compute(double seconds, models::Phase phase, const std::string& label) override {
    if (seconds <= 0) return;
    seconds *= factor_;
    if (ctx_.traced(rank_, iteration_)) ctx_.trace(rank_, 0, label, models::to_string(phase), now(), seconds);
    debt_ += seconds;
    current().compute_s += seconds;
  }

  void submit(const models::CommRequest& request) override {
    auto& state = ctx_.workers[static_cast<std::size_t>(rank_)];
    QueuedComm item{request, iteration_, now()};
    if (ctx_.analytic() && request.kind == models::CommRequest::Kind::ALLREDUCE) {
      state.analytic_pending.push_back(item);
      return;
    }
    // No sleep here: the stream sleeps until submit_s itself, so the compute actor
    // sleeps once per wait_comm instead of once per bucket.
    state.queue.push_back(item);
    ++state.outstanding;
    state.queued->release();
  }

  void wait_comm() override {
    flush();
    auto& state = ctx_.workers[static_cast<std::size_t>(rank_)];
    const double t0 = sg4::Engine::get_clock();
    if (!state.analytic_pending.empty()) resolve_analytic(state);
    if (state.outstanding > 0) {
      state.waiting = true;
      state.drained->acquire();
    }
    current().exposed_comm_s += sg4::Engine::get_clock() - t0;
  }

  void iteration_begin(int iteration) override {
    flush();
    iteration_ = iteration;
    factor_ = ctx_.scenario->training.stragglers.factor(rank_, rng_);
    IterationRecord rec;
    rec.start_s = rec.end_s = sg4::Engine::get_clock();
    rec.arrivals.assign(ctx_.plan.buckets.size(), -1.0);
    record().iterations.push_back(std::move(rec));
  }

  void iteration_end(int iteration) override {
    flush();
    current().end_s = sg4::Engine::get_clock();
    if (rank_ == 0 && ctx_.progress) ctx_.progress(iteration + 1, ctx_.plan.iterations, current().end_s);
  }

 private:
  void flush() {
    if (debt_ > 0) sg4::this_actor::sleep_for(debt_);
    debt_ = 0;
  }

  /// Analytic all-reduces: one rendezvous per iteration exchanges every worker's
  /// arrival per bucket; bucket b then runs from max(all arrivals, end of b-1)
  /// for its closed form, identically on every worker.
  void resolve_analytic(WorkerState& state) {
    const auto& coll = *ctx_.scenario->training.collective_algorithm;
    auto& round = ctx_.rounds[iteration_];
    round.arrival.resize(ctx_.plan.buckets.size(), -1.0);
    for (const auto& item : state.analytic_pending)
      round.arrival[static_cast<std::size_t>(item.request.bucket)] =
          std::max(round.arrival[static_cast<std::size_t>(item.request.bucket)], item.submit_s);
    ctx_.comm_barrier->wait();
    auto& rec = record();
    double end = 0;
    for (const auto& item : state.analytic_pending) {
      const auto b = static_cast<std::size_t>(item.request.bucket);
      const double own = std::max(item.submit_s, end);
      const double start = std::max(own, round.arrival[b]);
      const auto& algo = coll.resolve(ctx_.group, item.request.bytes, ctx_.ab);
      const double duration = algo.analytic_time_s(ctx_.group, item.request.bytes, ctx_.ab);
      end = start + duration;
      auto& it = rec.iterations.at(static_cast<std::size_t>(item.iteration));
      it.arrivals.at(b) = own;
      it.comm_busy_s += end - own;
      auto cached = state.analytic_traffic.find(item.request.bucket);
      if (cached == state.analytic_traffic.end())
        cached = state.analytic_traffic
                     .emplace(item.request.bucket,
                              schedule_traffic(algo.rank_phases(rank_, ctx_.group, item.request.bytes)))
                     .first;
      add_traffic(cached->second, rec.bytes_sent, rec.messages_sent);
      if (rank_ == 0)
        for (int s = 0; algo.uses_servers() && s < ctx_.group.servers; ++s)
          add_traffic(schedule_traffic(algo.rank_phases(ctx_.group.workers + s, ctx_.group, item.request.bytes)),
                      ctx_.result.bytes_sent_by_servers, ctx_.result.messages_sent_by_servers);
      if (ctx_.traced(rank_, item.iteration))
        ctx_.trace(rank_, 1, fmt::format("bucket {}", b), "allreduce", own, end - own);
    }
    state.analytic_pending.clear();
    if (++round.readers == ctx_.group.workers) ctx_.rounds.erase(iteration_);
    if (end > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(end);
  }
  WorkerRecord& record() { return ctx_.result.workers[static_cast<std::size_t>(rank_)]; }
  IterationRecord& current() { return record().iterations.back(); }

  Context& ctx_;
  int rank_;
  std::mt19937_64 rng_;
  int iteration_ = 0;
  double factor_ = 1.0;
  double debt_ = 0;
};

/// A worker's communication stream: executes its requests one at a time, in order.
void comm_stream(Context& ctx, int rank) {
  auto& state = ctx.workers[static_cast<std::size_t>(rank)];
  auto& rec = ctx.result.workers[static_cast<std::size_t>(rank)];
  const auto& coll = *ctx.scenario->training.collective_algorithm;
  const int servers = ctx.group.servers;
  while (true) {
    state.queued->acquire();
    const QueuedComm item = state.queue.front();
    state.queue.pop_front();
    const auto& req = item.request;
    if (item.submit_s > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(item.submit_s);
    const double t0 = sg4::Engine::get_clock();
    auto& iteration = rec.iterations.at(static_cast<std::size_t>(item.iteration));
    if (req.kind == models::CommRequest::Kind::ALLREDUCE) {
      iteration.arrivals.at(static_cast<std::size_t>(req.bucket)) = t0;
      if (coll.uses_servers() && rank == 0)
        for (std::size_t s = 0; s < ctx.collective_jobs.size(); ++s) {
          ctx.collective_jobs[s].push_back(req.bytes);
          ctx.collective_ready[s]->release();
        }
      {
        // "auto" picks its algorithm for this platform's alpha and beta.
        const auto& algo = coll.resolve(ctx.group, req.bytes, ctx.ab);
        TrafficCounters traffic;
        ctx.executor->run(rank, ctx.stepwise() ? algo.rank_schedule(rank, ctx.group, req.bytes)
                                               : algo.rank_phases(rank, ctx.group, req.bytes),
                          traffic);
        add_traffic(traffic, rec.bytes_sent, rec.messages_sent);
      }
    } else {  // PUSH_PULL: a shard to every server, then every shard back
      const double shard = req.bytes / servers;
      std::vector<sg4::CommPtr> comms;
      for (int s = 0; s < servers; ++s) {
        auto* msg = new PsMessage{rank, req.bucket, shard, state.seen_version[{s, req.bucket}], item.iteration};
        comms.push_back(ctx.push_boxes[static_cast<std::size_t>(s)]->put_async(msg, units_of(shard)));
        rec.bytes_sent += shard;
        ++rec.messages_sent;
      }
      sg4::Comm::wait_all(comms);
      comms.clear();
      std::vector<PsMessage*> replies(static_cast<std::size_t>(servers), nullptr);
      for (int s = 0; s < servers; ++s)
        comms.push_back(ctx.pull_box(s, rank)->get_async(&replies[static_cast<std::size_t>(s)]));
      sg4::Comm::wait_all(comms);
      for (int s = 0; s < servers; ++s) {
        std::unique_ptr<PsMessage> reply(replies[static_cast<std::size_t>(s)]);
        state.seen_version[{s, req.bucket}] = reply->version;
      }
    }
    const double t1 = sg4::Engine::get_clock();
    iteration.comm_busy_s += t1 - t0;
    if (ctx.traced(rank, item.iteration))
      ctx.trace(rank, 1, fmt::format("bucket {}", req.bucket),
                req.kind == models::CommRequest::Kind::ALLREDUCE ? "allreduce" : "push_pull", t0, t1 - t0);
    if (--state.outstanding == 0 && state.waiting) {
      state.waiting = false;
      state.drained->release();
    }
  }
}

/// A parameter server's side of a collective that uses servers (e.g. "ps").
void collective_server(Context& ctx, int server) {
  const int rank = ctx.group.workers + server;
  const auto& coll = *ctx.scenario->training.collective_algorithm;
  const auto s = static_cast<std::size_t>(server);
  while (true) {
    ctx.collective_ready[s]->acquire();
    const double bytes = ctx.collective_jobs[s].front();
    ctx.collective_jobs[s].pop_front();
    const auto& algo = coll.resolve(ctx.group, bytes, ctx.ab);
    TrafficCounters traffic;
    ctx.executor->run(rank, ctx.stepwise() ? algo.rank_schedule(rank, ctx.group, bytes)
                                           : algo.rank_phases(rank, ctx.group, bytes),
                      traffic);
    add_traffic(traffic, ctx.result.bytes_sent_by_servers, ctx.result.messages_sent_by_servers);
  }
}

/// The server-side Runtime for sync models with parameter servers.
class SimServerRuntime final : public models::ServerRuntime {
 public:
  SimServerRuntime(Context& ctx, int server) : ctx_(ctx), server_(server) {}
  [[nodiscard]] int server() const override { return server_; }
  [[nodiscard]] int servers() const override { return ctx_.group.servers; }
  [[nodiscard]] int workers() const override { return ctx_.group.workers; }
  double now() override { return sg4::Engine::get_clock(); }

  void compute(double seconds, const std::string& label) override {
    if (seconds <= 0) return;
    // Traced when the push that triggered this update comes from a traced iteration.
    if (ctx_.traced(ctx_.group.workers + server_, last_iteration_))
      ctx_.trace(ctx_.group.workers + server_, 0, label, "update", now(), seconds);
    sg4::this_actor::sleep_for(seconds);
  }

  models::Push receive_push() override {
    std::unique_ptr<PsMessage> msg(ctx_.push_boxes[static_cast<std::size_t>(server_)]->get<PsMessage>());
    last_iteration_ = msg->iteration;
    return models::Push{msg->worker, msg->bucket, msg->bytes, msg->version};
  }

  void send_pull(int worker, int bucket, double bytes, std::int64_t version) override {
    auto* msg = new PsMessage{worker, bucket, bytes, version, last_iteration_};
    ctx_.pull_box(server_, worker)->put_init(msg, units_of(bytes))->detach();
    ctx_.result.bytes_sent_by_servers += bytes;
    ++ctx_.result.messages_sent_by_servers;
  }

  void record_staleness(std::int64_t staleness) override { ctx_.result.staleness.push_back(staleness); }

 private:
  Context& ctx_;
  int server_;
  int last_iteration_ = 0;
};

/// Installs the scenario's link traces (SimGrid profiles) on a link before it is sealed.
platforms::LinkConfigurator link_traces(const NetworkSpec& net, const platforms::Graph& g) {
  if (net.link_traces.empty()) return {};
  return [&net, &g, counter = 0](const platforms::Edge& e, sg4::Link* link) mutable {
    const auto& edge = g[e];
    for (const auto& trace : net.link_traces) {
      if (!trace.links.empty() && std::find(trace.links.begin(), trace.links.end(), edge.name) == trace.links.end())
        continue;
      if (!trace.bandwidth_Bps.empty()) {
        // SimGrid 3.32 applies profile values as absolute bandwidths (in payload units per second).
        std::string text;
        for (const auto& [t, bw] : trace.bandwidth_Bps) text += fmt::format("{} {}\n", t, bw * BYTE_SCALE);
        link->set_bandwidth_profile(
            simgrid::kernel::profile::ProfileBuilder::from_string(fmt::format("bw-{}", counter++), text, trace.period_s));
      }
      if (!trace.latency_s.empty()) {
        std::string text;
        for (const auto& [t, lat] : trace.latency_s) text += fmt::format("{} {}\n", t, lat);
        link->set_latency_profile(
            simgrid::kernel::profile::ProfileBuilder::from_string(fmt::format("lat-{}", counter++), text, trace.period_s));
      }
    }
  };
}

void compute_straggler_wait(SimulationResult& result) {
  if (result.workers.empty()) return;
  const std::size_t iterations = result.workers.front().iterations.size();
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::size_t buckets = result.workers.front().iterations[it].arrivals.size();
    for (std::size_t b = 0; b < buckets; ++b) {
      double last = -1;
      for (const auto& w : result.workers)
        if (it < w.iterations.size()) last = std::max(last, w.iterations[it].arrivals[b]);
      for (auto& w : result.workers)
        if (it < w.iterations.size() && w.iterations[it].arrivals[b] >= 0)
          w.iterations[it].straggler_wait_s += last - w.iterations[it].arrivals[b];
    }
  }
}

void collect_links(SimulationResult& result, const platforms::Topology& topo, const platforms::EmittedPlatform& platform) {
  const auto& g = topo.graph;
  std::size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const auto* link = platform.links[i];
    const auto [from, to] = platform.up[i++];
    for (const bool up : {true, false}) {
      const auto* half = sg4::Link::by_name_or_null(link->get_name() + (up ? "_UP" : "_DOWN"));
      if (half == nullptr) continue;
      LinkRecord rec;
      rec.name = up ? g[from].name + ">" + g[to].name : g[to].name + ">" + g[from].name;
      rec.bandwidth_Bps = g[e].bandwidth_Bps;
      rec.bytes = sg_link_get_cum_load(half) / BYTE_SCALE;
      rec.utilization = result.makespan_s > 0 ? rec.bytes / (rec.bandwidth_Bps * result.makespan_s) : 0;
      result.links.push_back(rec);
    }
  }
  std::sort(result.links.begin(), result.links.end(),
            [](const LinkRecord& a, const LinkRecord& b) { return a.name < b.name; });
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

SimulationResult simulate(const Scenario& scenario, const std::vector<std::string>& engine_args,
                          const ProgressCallback& progress) {
  EngineSession session(engine_args, scenario.network);
  sg_link_load_plugin_init();

  Context ctx;
  ctx.scenario = &scenario;
  ctx.progress = progress;
  ctx.plan.profile = &scenario.workload.profile;
  ctx.plan.iterations = scenario.workload.iterations;
  ctx.plan.buckets = models::make_buckets(scenario.workload.profile, scenario.training.bucketing.bucket_bytes);
  ctx.plan.overlap = scenario.training.bucketing.overlap;
  ctx.group = models::CollectiveGroup{scenario.platform.workers, scenario.platform.parameter_servers, nullptr};
  if (auto nb = platforms::rank_neighbours(scenario.platform.graph); !nb.empty())
    ctx.group.neighbours = std::make_shared<const std::vector<std::vector<int>>>(std::move(nb));
  ctx.ab = analytic_alpha_beta(scenario.platform.graph);
  ctx.platform = platforms::emit_platform(scenario.platform.graph, BYTE_SCALE,
                                         link_traces(scenario.network, scenario.platform.graph.graph),
                                         scenario.platform.routing, scenario.seed);
  for (const auto* link : ctx.platform.links)
    for (const char* half : {"_UP", "_DOWN"})
      if (const auto* l = sg4::Link::by_name_or_null(link->get_name() + half)) sg_link_load_track(l);
  ctx.executor = std::make_unique<ScheduleExecutor>(ctx.platform.hosts);
  ctx.comm_barrier = sg4::Barrier::create(static_cast<unsigned>(scenario.platform.workers));
  ctx.workers.resize(static_cast<std::size_t>(scenario.platform.workers));
  ctx.result.workers.resize(static_cast<std::size_t>(scenario.platform.workers));
  ctx.result.alpha_s = ctx.ab.alpha_s;
  ctx.result.beta_s_per_byte = ctx.ab.beta_s_per_byte;
  ctx.result.buckets = static_cast<int>(ctx.plan.buckets.size());
  for (int s = 0; s < scenario.platform.parameter_servers; ++s)
    ctx.push_boxes.push_back(sg4::Mailbox::by_name(fmt::format("push:{}", s)));

  const auto& sync = *scenario.training.sync_model;
  for (int r = 0; r < scenario.platform.workers; ++r) {
    auto* host = ctx.platform.hosts[static_cast<std::size_t>(r)];
    sg4::Actor::create(fmt::format("worker-{}", r), host, session.guard([&ctx, &sync, r]() {
      SimRuntime runtime(ctx, r);
      sync.run_worker(runtime, ctx.plan);
    }));
    sg4::Actor::create(fmt::format("comm-{}", r), host, session.guard([&ctx, r]() { comm_stream(ctx, r); }))
        ->daemonize();
  }
  for (int s = 0; s < scenario.platform.parameter_servers; ++s) {
    auto* host = ctx.platform.hosts[static_cast<std::size_t>(scenario.platform.workers + s)];
    if (sync.uses_servers())
      sg4::Actor::create(fmt::format("ps-{}", s), host, session.guard([&ctx, &sync, s]() {
        // A permanent receiver: pushes from every worker flow at once (eagerly), as into a real server's NIC.
        ctx.push_boxes[static_cast<std::size_t>(s)]->set_receiver(sg4::Actor::self());
        SimServerRuntime runtime(ctx, s);
        sync.run_server(runtime, ctx.plan);
      }));
    if (scenario.training.collective_algorithm->uses_servers() && !ctx.analytic()) {
      ctx.collective_jobs.emplace_back();
      ctx.collective_ready.push_back(sg4::Semaphore::create(0));
      sg4::Actor::create(fmt::format("ps-collective-{}", s), host,
                         session.guard([&ctx, s]() { collective_server(ctx, s); }))
          ->daemonize();
    }
  }
  session.engine().run();
  session.rethrow_if_failed();
  if (session.deadlocked()) throw std::runtime_error("the simulation deadlocked (sends and receives do not match)");
  ctx.result.makespan_s = sg4::Engine::get_clock();
  compute_straggler_wait(ctx.result);
  collect_links(ctx.result, scenario.platform.graph, ctx.platform);
  return std::move(ctx.result);
}

}  // namespace ddlsim::sim
