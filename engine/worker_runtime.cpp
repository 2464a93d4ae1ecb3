// ddlsim: a worker's two actors -- compute (the Runtime facade its sync model
// runs against) and its communication stream.
#include "engine/context.hpp"
#include "engine/flow_bounds.hpp"
#include "engine/lazy_runtime.hpp"
#include "engine/point_to_point.hpp"

#include <algorithm>
#include <stdexcept>
#include <fmt/format.h>

namespace ddlsim::sim::detail {
namespace {

/// The worker-side Runtime on SimGrid: the compute actor, its communication stream and its
/// point-to-point operations (the PeerComm; flows at every fidelity).
class SimRuntime final : public LazyRuntime, public models::PeerComm {
 public:
  SimRuntime(Context& ctx, int rank) : LazyRuntime(ctx, rank), sim_(ctx), p2p_(ctx, rank) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] const models::LogicalGraph* graph() const override { return ctx_.graph.get(); }
  void record_neighbour_staleness(std::int64_t iterations) override {
    ctx_.result.neighbour_staleness.add(iterations);
  }
  [[nodiscard]] models::convergence::PeerTraining* training() const override {
    return ctx_.options != nullptr ? ctx_.options->peer_training : nullptr;
  }

  void submit(const models::CommRequest& request) override {
    auto& state = ctx_.workers[static_cast<std::size_t>(rank_)];
    if (!request.group.empty()) check_subgroup(request.group);
    const QueuedComm item = queued(request);
    // Subgroup all-reduces run as flows at every fidelity (point_to_point_fidelity in summary.json).
    using K = models::CommRequest::Kind;
    const bool collective = request.kind == K::ALLREDUCE || request.kind == K::ALLGATHER || request.kind == K::REDUCE_SCATTER;
    if (ctx_.analytic() && collective && request.group.empty()) {
      state.analytic_pending.push_back(item);
      return;
    }
    // No sleep here: the stream sleeps until submit_s itself, so the compute actor
    // sleeps once per wait_comm instead of once per bucket.
    state.queue.push_back(item);
    ++state.outstanding;
    state.bucket_seq[request.bucket] = ++state.submitted;
    sim_.sim_workers[static_cast<std::size_t>(rank_)].queued->release();
  }

  models::CommHandle isend(int peer, double bytes, int tag, std::int64_t version) override {
    flush();
    return p2p_.isend(peer, bytes, tag, version, iteration_);
  }
  models::CommHandle irecv(int peer, int tag) override {
    flush();
    return p2p_.irecv(peer, tag, iteration_);
  }
  models::CommHandle put(int peer, double bytes, int tag, std::int64_t version) override {
    flush();
    return p2p_.put(peer, bytes, tag, version, iteration_);
  }
  models::Message wait(models::CommHandle handle) override {
    flush();
    const double t0 = sg4::Engine::get_clock();
    auto msg = p2p_.wait(handle);
    current().exposed_comm_s += sg4::Engine::get_clock() - t0;
    return msg;
  }
  std::optional<models::Message> latest(int peer, int tag) override {
    flush();
    return p2p_.latest(peer, tag);
  }
  int compression_variant(int iteration) override {
    if (!ctx_.adaptive) return -1;
    flush();
    return adaptive_variant(sim_, iteration, sg4::Engine::get_clock());
  }

  /// After the model's loop: nothing may stay in flight. A model with a logical graph puts
  /// to its neighbours, so every worker waits here until all have finished (no put may
  /// arrive at a worker that has gone), then frees the puts it never read.
  void finish() {
    flush();
    p2p_.wait_outstanding();
    if (ctx_.graph) sim_.end_barrier->wait();
    p2p_.drain();
  }

 protected:
  [[nodiscard]] double clock() const override { return sg4::Engine::get_clock(); }
  void sleep_for(double seconds) override { sg4::this_actor::sleep_for(seconds); }
  void sleep_until(double time_s) override { sg4::this_actor::sleep_until(time_s); }
  void rendezvous() override { sim_.comm_barrier->wait(); }
  void wait_stream(WorkerState& state, std::int64_t target) override {
    state.wait_target = target;
    state.waiting = true;
    sim_.sim_workers[static_cast<std::size_t>(rank_)].drained->acquire();
  }
  double point_to_point_busy_s(double start_s, double end_s) override { return p2p_.busy_s(start_s, end_s); }

 private:
  void check_subgroup(const std::vector<int>& group) const {
    const bool sorted = std::is_sorted(group.begin(), group.end()) &&
                        std::adjacent_find(group.begin(), group.end()) == group.end();
    if (!sorted || group.front() < 0 || group.back() >= ctx_.group.workers ||
        !std::binary_search(group.begin(), group.end(), rank_))
      throw std::logic_error(fmt::format("worker {}: a subgroup all-reduce needs ascending distinct worker ranks "
                                         "including the caller, got {} members",
                                         rank_, group.size()));
    if (ctx_.scenario->training.collective_algorithm->uses_servers())
      throw std::logic_error("a subgroup all-reduce cannot run a collective that uses parameter servers");
  }

  Context& sim_;  // the SimGrid handles (ctx_ is its RunState)
  PointToPoint p2p_;
};

}  // namespace

void run_worker(Context& ctx, int rank, const models::SyncModel& sync) {
  SimRuntime runtime(ctx, rank);
  sync.run_peer_worker(runtime, runtime, ctx.plan);
  runtime.finish();
}

const char* request_category(models::CommRequest::Kind kind) {
  switch (kind) {
    case models::CommRequest::Kind::ALLREDUCE: return "allreduce";
    case models::CommRequest::Kind::PUSH_PULL: return "push_pull";
    case models::CommRequest::Kind::PULL: return "pull";
    case models::CommRequest::Kind::ALLGATHER: return "allgather";
    case models::CommRequest::Kind::REDUCE_SCATTER: return "reduce_scatter";
  }
  return "?";
}

std::vector<int> rotation(int workers, int root) {
  std::vector<int> out;
  if (root == 0) return out;
  for (int i = 0; i < workers; ++i) out.push_back((i + root) % workers);
  return out;
}

void comm_stream(Context& ctx, int rank, int slot) {
  auto& state = ctx.workers[static_cast<std::size_t>(rank)];
  auto& rec = ctx.result.workers[static_cast<std::size_t>(rank)];
  const auto& coll = *ctx.scenario->training.collective_algorithm;
  const int servers = ctx.group.servers;
  auto& sim = ctx.sim_workers[static_cast<std::size_t>(rank)];
  while (true) {
    sim.queued->acquire();
    const QueuedComm item = state.queue.front();
    state.queue.pop_front();
    const auto& req = item.request;
    if (item.submit_s > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(item.submit_s);
    const double t0 = sg4::Engine::get_clock();
    if (state.running++ == 0) state.busy_since = t0;
    auto& iteration = ctx.record(rank, item.iteration);
    if (req.kind != models::CommRequest::Kind::PUSH_PULL && req.kind != models::CommRequest::Kind::PULL) {
      if (req.group.empty()) iteration.arrivals.at(static_cast<std::size_t>(req.bucket)) = t0;
      if (coll.uses_servers() && rank == 0)
        for (std::size_t s = 0; s < ctx.collective_jobs.size(); ++s) {
          ctx.collective_jobs[s].push_back(req.bytes);
          ctx.collective_ready[s]->release();
        }
      if (req.group.empty()) {
        // "auto" picks its algorithm for this platform's alpha and beta (at this iteration).
        const auto& algo = ctx.request_collective(req, item.iteration, t0);
        if (rank == 0) ctx.note_collective(item.iteration, ctx.request_collective_name(req, item.iteration, t0));
        // Every call pays its launch and handshake cost before its first message; its messages pay
        // its protocol's costs (the `nccl` preset picks one per call, as the closed form does).
        const auto call = call_protocol(ctx, algo, req.bytes, ctx.network->at(t0));
        if (call.call_cost_s > 0) sg4::this_actor::sleep_for(call.call_cost_s);
        TrafficCounters traffic;
        // A root other than 0 rotates the ranks: the schedule's rank i runs on worker (i + root) mod N.
        const std::vector<int> rotated = rotation(ctx.group.workers, req.root);
        const int me = rotated.empty() ? rank : (rank - req.root + ctx.group.workers) % ctx.group.workers;
        const ChannelRanks ch = channel_ranks(ctx, rank, req.bucket, rotated);  // own mailboxes per bucket
        const auto steps = rank_steps(algo, me, ctx.group, req.bytes, ctx.stepwise());
        ctx.executor->run(ch.rank, *steps, traffic, ch.members.empty() ? nullptr : &ch.members, call.software.get());
        add_traffic(traffic, rec.bytes_sent, rec.messages_sent);
      } else {
        // A subgroup of k workers: the collective among k ranks (the closed forms pick for "auto";
        // the subgroup has no platform-aware cost), its ranks mapped to the members' hosts. A
        // sharded iteration's all-gather or reduce-scatter runs the plan's (hybrid sharding's
        // shard group); an all-reduce the scenario's collective.
        const models::CollectiveGroup sub(static_cast<int>(req.group.size()));
        const auto me = static_cast<int>(std::lower_bound(req.group.begin(), req.group.end(), rank) - req.group.begin());
        const auto& algo = req.kind == models::CommRequest::Kind::ALLREDUCE ? models::resolve(coll, sub, req.bytes, ctx.ab)
                                                                           : ctx.request_collective(req, item.iteration, t0);
        const auto& net = ctx.scenario->network;
        const auto call = models::call_protocol(algo, sub, req.bytes, ctx.ab, net.collective_call_s, net.collective_call_given);
        if (sub.workers > 1 && call.call_cost_s > 0) sg4::this_actor::sleep_for(call.call_cost_s);
        TrafficCounters traffic;
        const auto steps = rank_steps(algo, me, sub, req.bytes, ctx.stepwise());
        ctx.executor->run(rank, *steps, traffic, &req.group, call.software.get());
        add_traffic(traffic, rec.bytes_sent, rec.messages_sent);
      }
    } else {  // PUSH_PULL: a shard to every server, then every shard back (PULL: only back)
      // The library's costs (engine/point_to_point.hpp): the pushes are posted together, one o_send;
      // the replies are taken in together, one o_recv. The servers' receives are posted ahead, so a
      // push never waits for a receiver-ready notice.
      const double shard = req.bytes / servers;
      const auto* lib = library(ctx);
      std::vector<sg4::CommPtr> comms;
      const bool pushes = req.kind == models::CommRequest::Kind::PUSH_PULL;
      if (pushes && lib != nullptr && lib->send_overhead_s > 0) sg4::this_actor::sleep_for(lib->send_overhead_s);
      std::vector<PsMessage*> replies(static_cast<std::size_t>(servers), nullptr);
      if (ctx.fluid_ps) {
        FluidPs::Waiter waiter;
        if (pushes) {
          waiter.outstanding = servers;
          for (int s = 0; s < servers; ++s) {
            auto* msg = new PsMessage{rank, req.bucket, shard, state.seen_version[{s, req.bucket}], item.iteration};
            const int server_rank = ctx.group.workers + s;
            const double rate = credit_rate_cap(ctx, rank, server_rank, shard);
            ctx.fluid_ps->push(rank, s, msg, wire_units(ctx, rank, server_rank, shard),
                               rate > 0 ? rate / lib->protocol_efficiency * byte_scale() : -1, &waiter);
            rec.bytes_sent += shard;
            ++rec.messages_sent;
          }
          waiter.done->acquire();
        }
        waiter.outstanding = servers;
        for (int s = 0; s < servers; ++s) ctx.fluid_ps->receive_pull(rank, s, &replies[static_cast<std::size_t>(s)], &waiter);
        waiter.done->acquire();
      }
      for (int s = 0; s < servers && pushes && !ctx.fluid_ps; ++s) {
        auto* msg = new PsMessage{rank, req.bucket, shard, state.seen_version[{s, req.bucket}], item.iteration};
        const int server_rank = ctx.group.workers + s;
        comms.push_back(post_data(ctx.push_boxes[static_cast<std::size_t>(s)][static_cast<std::size_t>(rank)], msg,
                                  wire_units(ctx, rank, server_rank, shard), credit_rate_cap(ctx, rank, server_rank, shard),
                                  lib != nullptr ? lib->protocol_efficiency : 1.0));
        rec.bytes_sent += shard;
        ++rec.messages_sent;
      }
      if (!ctx.fluid_ps) {
        sg4::Comm::wait_all(comms);
        if (FlowBounds::active())
          for (const auto& c : comms) FlowBounds::forget(*c);
        comms.clear();
        for (int s = 0; s < servers; ++s)
          comms.push_back(ctx.pull_box(s, rank)->get_async(&replies[static_cast<std::size_t>(s)]));
        sg4::Comm::wait_all(comms);
      }
      if (lib != nullptr && lib->recv_overhead_s > 0) sg4::this_actor::sleep_for(lib->recv_overhead_s);
      for (int s = 0; s < servers; ++s) {
        std::unique_ptr<PsMessage> reply(replies[static_cast<std::size_t>(s)]);
        state.seen_version[{s, req.bucket}] = reply->version;
      }
    }
    const double t1 = sg4::Engine::get_clock();
    if (--state.running == 0) iteration.comm_busy_s += t1 - state.busy_since;  // the union of the spans
    if (ctx.traced(rank, item.iteration))
      ctx.trace(rank, 1 + slot, req.bucket >= 0 ? fmt::format("bucket {}", req.bucket) : std::string("control"),
                request_category(req.kind),
                t0, t1 - t0);
    --state.outstanding;
    if (++state.finished >= state.wait_target && state.waiting) {
      state.waiting = false;
      sim.drained->release();
    }
  }
}

}  // namespace ddlsim::sim::detail
