// ddlsim: analytic all-reduces resolved at one rendezvous per iteration (engine/lazy_runtime.hpp),
// the same under either engine.
#include "engine/lazy_runtime.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddlsim::sim::detail {

std::string collective_name(const RunState& ctx, const models::CollectiveGroup& group, double bytes,
                            const models::AlphaBeta& ab) {
  auto name = models::resolved_name(*ctx.scenario->training.collective_algorithm, group, bytes, ab);
  return name.empty() ? ctx.scenario->training.collective.name : name;
}

void post_analytic_arrivals(RunState& ctx, int iteration, const WorkerState& state) {
  auto& round = ctx.rounds[iteration];
  round.arrival.resize(ctx.plan.buckets.size(), -1.0);
  round.resolved.resize(ctx.plan.buckets.size());
  for (const auto& item : state.analytic_pending)
    round.arrival[static_cast<std::size_t>(item.request.bucket)] =
        std::max(round.arrival[static_cast<std::size_t>(item.request.bucket)], item.submit_s);
}

double resolve_analytic_round(RunState& ctx, int rank, int iteration, WorkerState& state) {
  auto& round = ctx.rounds[iteration];
  const int slot = ctx.slot(rank);
  // max_inflight > 1: the collectives share the network (engine/concurrent_comm.cpp); else one at a time.
  const auto spans = ctx.scenario->training.bucketing.max_inflight > 1
                         ? concurrent_spans(ctx, state.analytic_pending, round.arrival)
                         : std::vector<AnalyticSpan>{};
  double end = 0, last = 0;
  IterationRecord* rec = nullptr;  // of the iteration the previous item belongs to
  int rec_iteration = -1;
  for (std::size_t i = 0; i < state.analytic_pending.size(); ++i) {
    const auto& item = state.analytic_pending[i];
    const auto b = static_cast<std::size_t>(item.request.bucket);
    const double own = spans.empty() ? std::max(item.submit_s, end) : spans[i].own_s;
    const double start = spans.empty() ? std::max(own, round.arrival[b]) : spans[i].start_s;
    // Every worker that starts bucket b at the same time gets the same algorithm and end: resolved
    // once per round (worker 0 always resolves, for the name it records).
    auto& memo = round.resolved[b];
    const bool known = rank != 0 && memo.algorithm != nullptr && memo.start_s == start && memo.bytes == item.request.bytes;
    const models::Collective* chosen = memo.algorithm;
    if (!known) {
      chosen = &ctx.gradient_collective(item.iteration, start, item.request.bytes);
      if (rank == 0) ctx.note_collective(item.iteration, ctx.gradient_collective_name(item.iteration, start, item.request.bytes));
    }
    const auto& algo = *chosen;
    if (!spans.empty()) {
      end = spans[i].end_s;
    } else if (known) {
      end = memo.end_s;
    } else {
      const models::AlphaBeta& ab = ctx.network->at(start);
      const auto call = call_protocol(ctx, algo, item.request.bytes, ab);
      const CostTerms cost = cost_terms(algo, ctx.group, item.request.bytes, models::with_software(ab, call.software));
      end = ctx.network->finish(start, call.call_cost_s + cost.latency_s, cost.transfer_s);
    }
    if (!known) memo = AnalyticRound::Resolved{start, item.request.bytes, end, chosen};
    last = std::max(last, end);
    if (rec == nullptr || rec_iteration != item.iteration) {
      rec = &ctx.record(slot, item.iteration);
      rec_iteration = item.iteration;
    }
    rec->arrivals.at(b) = own;
    rec->comm_busy_s += spans.empty() ? end - own : spans[i].busy_s;
    if (ctx.classes) {  // counted for every worker of the class once the run is over
      ctx.classes->note_collective(slot, item.request.bucket, item.request.root, algo, item.request.bytes);
    } else {
      // What this rank sends depends on its place in the (rotated) schedule.
      const int me = (rank - item.request.root + ctx.group.workers) % ctx.group.workers;
      if (state.analytic_traffic.size() <= b) state.analytic_traffic.resize(b + 1);
      auto& cached = state.analytic_traffic[b];
      if (cached.me != me || cached.algorithm != &algo || cached.bytes != item.request.bytes) {
        const auto key = std::make_tuple(item.request.bucket, me, &algo, item.request.bytes);
        auto seen = state.analytic_traffic_seen.find(key);
        if (seen == state.analytic_traffic_seen.end())
          seen = state.analytic_traffic_seen
                     .emplace(key, schedule_traffic(algo.rank_phases(me, ctx.group, item.request.bytes)))
                     .first;
        cached = WorkerState::AnalyticTraffic{me, &algo, item.request.bytes, seen->second};
      }
      auto& sent = ctx.result.workers[static_cast<std::size_t>(rank)];
      add_traffic(cached.traffic, sent.bytes_sent, sent.messages_sent);
    }
    if (rank == 0 && ctx.analytic_links) ctx.analytic_links->add(algo, ctx.group, item.request.bytes, item.request.root);
    if (rank == 0)
      for (int s = 0; algo.uses_servers() && s < ctx.group.servers; ++s)
        add_traffic(schedule_traffic(algo.rank_phases(ctx.group.workers + s, ctx.group, item.request.bytes)),
                    ctx.result.bytes_sent_by_servers, ctx.result.messages_sent_by_servers);
    if (ctx.traced(rank, item.iteration))
      ctx.trace(rank, 1 + (spans.empty() ? 0 : spans[i].slot), fmt::format("bucket {}", b), "allreduce", own,
                end - own);
  }
  state.analytic_pending.clear();
  if (++round.readers == ctx.simulated_workers()) ctx.rounds.erase(iteration);
  return last;
}

}  // namespace ddlsim::sim::detail
