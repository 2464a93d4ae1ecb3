// ddlsim: the framework side of communication -- which buckets a policy makes (size cap,
// MG-WFBP, PyTorch DDP, Horovod tensor fusion) and how several bucket collectives share a
// worker's communication stream (training.bucketing.max_inflight).
#include "models/concurrent_collectives.hpp"
#include "engine/context.hpp"

#include <algorithm>

namespace ddlsim::sim::detail {

std::vector<sg4::Host*> channel_hosts(const Context& ctx) {
  const auto& hosts = ctx.platform.hosts;
  if (ctx.scenario->training.bucketing.max_inflight <= 1) return hosts;
  std::vector<sg4::Host*> out;
  for (std::size_t c = 0; c <= ctx.plan.buckets.size(); ++c) out.insert(out.end(), hosts.begin(), hosts.end());
  return out;
}

ChannelRanks channel_ranks(const Context& ctx, int rank, int bucket, const std::vector<int>& rotated) {
  ChannelRanks out{rank, rotated};
  if (ctx.scenario->training.bucketing.max_inflight <= 1 || bucket < 0) return out;
  const int offset = (bucket + 1) * static_cast<int>(ctx.platform.hosts.size());
  out.rank = rank + offset;
  if (out.members.empty())
    for (int i = 0; i < ctx.group.workers; ++i) out.members.push_back(i);
  for (auto& m : out.members) m += offset;
  return out;
}

std::vector<AnalyticSpan> concurrent_spans(RunState& ctx, const std::vector<QueuedComm>& pending,
                                           const std::vector<double>& arrival) {
  const auto& coll = *ctx.scenario->training.collective_algorithm;
  const int k = ctx.scenario->training.bucketing.max_inflight;
  std::vector<double> ready;
  for (const auto& item : pending) ready.push_back(arrival.at(static_cast<std::size_t>(item.request.bucket)));
  const auto spans = models::schedule_concurrent(ready, k, [&](std::size_t j, double start) {
    const auto& item = pending[j];
    const auto& algo =
        models::resolve(coll, ctx.resolution_group(item.iteration, start), item.request.bytes, ctx.resolution_ab(item.iteration, start));
    const models::AlphaBeta& ab = ctx.network->at(start);
    const auto call = call_protocol(ctx, algo, item.request.bytes, ab);
    const CostTerms cost = cost_terms(algo, ctx.group, item.request.bytes, models::with_software(ab, call.software));
    return models::ConcurrentCost{call.call_cost_s + cost.latency_s, cost.transfer_s};
  });
  // This worker dispatches in order, once fewer than K of its collectives run: own_j =
  // max(its submit, own_{j-1}, admit_j); its stream is busy over the union of [own_j, end_j].
  std::vector<AnalyticSpan> out;
  std::vector<double> slot_end(static_cast<std::size_t>(k), 0.0);
  double own = 0, covered = 0;
  for (std::size_t j = 0; j < pending.size(); ++j) {
    own = std::max({pending[j].submit_s, own, spans[j].admit_s});
    AnalyticSpan s{own, spans[j].start_s, spans[j].end_s, std::max(0.0, spans[j].end_s - std::max(own, covered)), 0};
    covered = std::max(covered, spans[j].end_s);
    // A free timeline row: at own_j at most K - 1 earlier collectives are still running.
    const auto free = std::find_if(slot_end.begin(), slot_end.end(), [own](double e) { return e <= own; });
    s.slot = static_cast<int>(free == slot_end.end() ? 0 : free - slot_end.begin());
    slot_end[static_cast<std::size_t>(s.slot)] = s.end_s;
    out.push_back(s);
  }
  return out;
}

}  // namespace ddlsim::sim::detail
