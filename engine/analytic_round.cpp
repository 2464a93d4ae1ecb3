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

namespace {

/// The round worker `state` takes part in next: its iteration's first, or the one after its last.
std::pair<int, int> round_key(int iteration, const WorkerState& state) {
  return {iteration, state.round_iteration == iteration ? state.round_seq : 0};
}

}  // namespace

void post_analytic_arrivals(RunState& ctx, int iteration, const WorkerState& state) {
  auto& round = ctx.rounds[round_key(iteration, state)];
  round.arrival.resize(ctx.plan.buckets.size(), -1.0);
  round.resolved.resize(ctx.plan.buckets.size());
  for (const auto& item : state.analytic_pending)
    round.arrival[static_cast<std::size_t>(item.request.bucket)] =
        std::max(round.arrival[static_cast<std::size_t>(item.request.bucket)], item.submit_s);
}

double resolve_analytic_round(RunState& ctx, int rank, int iteration, WorkerState& state, int through_bucket) {
  const auto key = round_key(iteration, state);
  auto& round = ctx.rounds[key];
  const int slot = ctx.slot(rank);
  // max_inflight > 1: the collectives share the network (engine/concurrent_comm.cpp); else one at a time.
  const auto spans = ctx.scenario->training.bucketing.max_inflight > 1
                         ? concurrent_spans(ctx, state.analytic_pending, round.arrival)
                         : std::vector<AnalyticSpan>{};
  // The stream runs one request at a time: none starts before what earlier rounds resolved has ended.
  double end = state.stream_free_s, last = 0, through = -1;
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
      chosen = &ctx.request_collective(item.request, item.iteration, start);
      if (rank == 0) ctx.note_collective(item.iteration, ctx.request_collective_name(item.request, item.iteration, start));
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
    if (item.request.bucket == through_bucket) through = last;
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
      ctx.trace(rank, 1 + (spans.empty() ? 0 : spans[i].slot), fmt::format("bucket {}", b),
                request_category(item.request.kind), own, end - own);
  }
  state.analytic_pending.clear();
  state.stream_free_s = std::max(state.stream_free_s, last);
  state.round_seq = key.first == state.round_iteration ? state.round_seq + 1 : 1;
  state.round_iteration = key.first;
  if (++round.readers == ctx.simulated_workers()) ctx.rounds.erase(key);
  return through >= 0 ? through : last;
}

}  // namespace ddlsim::sim::detail
