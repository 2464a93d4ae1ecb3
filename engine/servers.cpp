// ddlsim: parameter-server actors: the sync model's server loop, and the
// server side of collectives that use servers.
#include "engine/context.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddlsim::sim::detail {
namespace {

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

  /// Pushes are taken in the order they finish arriving: the server keeps one
  /// receive posted per worker (so every push flows at once into its NIC, as into
  /// a real server's) and waits for whichever completes first. A single mailbox
  /// would hand pushes over in posting order, so a fast worker's finished push
  /// would wait behind a slow worker's unfinished one.
  models::Push receive_push() override {
    const auto n = static_cast<std::size_t>(ctx_.group.workers);
    if (received_.empty()) {
      inbox_.assign(n, nullptr);
      received_.assign(n, 0);
      for (std::size_t w = 0; w < n; ++w) post(w);
    }
    std::unique_ptr<PsMessage> msg;
    if (ctx_.fluid_ps) {
      msg.reset(ctx_.fluid_ps->take_push(server_));
    } else {
      const auto done = static_cast<std::size_t>(sg4::Comm::wait_any(active_));
      const auto w = worker_of_[done];
      active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(done));
      worker_of_.erase(worker_of_.begin() + static_cast<std::ptrdiff_t>(done));
      msg.reset(static_cast<PsMessage*>(inbox_[w]));
      inbox_[w] = nullptr;
    }
    const auto w = static_cast<std::size_t>(msg->worker);
    ++received_[w];
    post(w);
    last_iteration_ = msg->iteration;
    // The server's CPU takes each push in (o_recv) and posts each reply (o_send), one message at a time.
    if (const auto* lib = library(ctx_); lib != nullptr && lib->recv_overhead_s > 0)
      sg4::this_actor::sleep_for(lib->recv_overhead_s);
    return models::Push{msg->worker, msg->bucket, msg->bytes, msg->version, msg->iteration};
  }

  void send_pull(int worker, int bucket, double bytes, std::int64_t version) override {
    auto* msg = new PsMessage{worker, bucket, bytes, version, last_iteration_};
    const auto* lib = library(ctx_);
    if (lib != nullptr && lib->send_overhead_s > 0) sg4::this_actor::sleep_for(lib->send_overhead_s);
    const int me = ctx_.group.workers + server_;
    if (ctx_.fluid_ps) {
      const double rate = credit_rate_cap(ctx_, me, worker, bytes);
      ctx_.fluid_ps->pull(server_, worker, msg, wire_units(ctx_, me, worker, bytes),
                          rate > 0 ? rate / lib->protocol_efficiency * byte_scale() : -1);
      ctx_.result.bytes_sent_by_servers += bytes;
      ++ctx_.result.messages_sent_by_servers;
      return;
    }
    auto comm = ctx_.pull_box(server_, worker)->put_init(msg, wire_units(ctx_, me, worker, bytes));
    if (const double rate = credit_rate_cap(ctx_, me, worker, bytes); rate > 0)
      comm->set_rate(rate / lib->protocol_efficiency * byte_scale());
    comm->detach();  // its cap is not kept across link-trace bandwidth changes (engine/flow_bounds.hpp): a detached flow is never forgotten
    ctx_.result.bytes_sent_by_servers += bytes;
    ++ctx_.result.messages_sent_by_servers;
  }

  void record_staleness(std::int64_t staleness) override { ctx_.result.staleness.add(staleness); }

  void record_update(int bucket, const std::vector<models::Push>& applied, std::int64_t version_after) override {
    if (!ctx_.scenario->training.convergence) return;  // kept only for the co-simulation
    models::convergence::Update u{now(), server_, bucket, version_after, {}};
    for (const auto& p : applied) u.gradients.push_back({p.worker, p.iteration, p.seen_version});
    ctx_.result.updates.push_back(std::move(u));
  }

  void record_held(const models::Push& push, double seconds) override {
    auto& it = ctx_.record(push.worker, push.iteration);
    auto& held = it.held.at(static_cast<std::size_t>(push.bucket));
    held = std::max(held, seconds);  // servers hold a bucket's shards at once: the longest counts
  }

 private:
  void post(std::size_t worker) {
    if (ctx_.scenario->training.sync_model->pushes_per_worker(ctx_.plan, static_cast<int>(worker)) <= received_[worker]) return;
    if (ctx_.fluid_ps) {
      ctx_.fluid_ps->post_receive(server_, static_cast<int>(worker));
      return;
    }
    active_.push_back(ctx_.push_boxes[static_cast<std::size_t>(server_)][worker]->get_async(&inbox_[worker]));
    worker_of_.push_back(worker);
  }

  Context& ctx_;
  int server_;
  int last_iteration_ = 0;
  std::vector<sg4::CommPtr> active_;       // receives posted and not finished
  std::vector<std::size_t> worker_of_;     // the worker of each entry of active_
  std::vector<void*> inbox_;               // per worker: the message of its posted receive
  std::vector<std::int64_t> received_;     // per worker: pushes taken so far (empty before the first)
};

}  // namespace

void run_server(Context& ctx, int server, const models::SyncModel& sync) {
  SimServerRuntime runtime(ctx, server);
  sync.run_server(runtime, ctx.plan);
}

void collective_server(Context& ctx, int server) {
  const int rank = ctx.group.workers + server;
  const auto& coll = *ctx.scenario->training.collective_algorithm;
  const auto s = static_cast<std::size_t>(server);
  while (true) {
    ctx.collective_ready[s]->acquire();
    const double bytes = ctx.collective_jobs[s].front();
    ctx.collective_jobs[s].pop_front();
    const auto& algo = models::resolve(coll, ctx.group, bytes, ctx.ab);
    // The protocol the workers picked for this call (the same choice, on the same network).
    const auto call = call_protocol(ctx, algo, bytes, ctx.network->at(sg4::Engine::get_clock()));
    TrafficCounters traffic;
    const auto steps = rank_steps(algo, rank, ctx.group, bytes, ctx.stepwise());
    ctx.executor->run(rank, *steps, traffic, nullptr, call.software.get());
    add_traffic(traffic, ctx.result.bytes_sent_by_servers, ctx.result.messages_sent_by_servers);
  }
}

}  // namespace ddlsim::sim::detail
