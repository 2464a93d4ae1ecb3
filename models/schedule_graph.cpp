// ddlsim: the transfers of a collective's rank schedules and their dependency order
// (models/schedule_graph.hpp).
#include "models/schedule_graph.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::models::detail {
namespace {

/// One side of a transfer: a SEND or a RECV op, keyed by its (source, destination) pair.
struct End {
  std::int64_t pair = 0;  // source * ranks + destination
  int step = 0;           // flattened step id of the rank that posts it
  double bytes = 0;
};

}  // namespace

std::optional<ScheduleGraph> flatten_schedules(const Collective& algorithm, const CollectiveGroup& group, double bytes,
                                               bool pipelined, std::int64_t max_ends) {
  const int n = group.size();
  // Every rank's steps, flattened (step id = first[r] + i), and their sends and receives; one
  // rank's schedule at a time, so a large schedule is never held whole.
  ScheduleGraph g;
  g.ranks = n;
  g.first.assign(static_cast<std::size_t>(n) + 1, 0);
  auto& first = g.first;
  auto& step_rank = g.step_rank;
  auto& latency_steps = g.latency_steps;
  auto& count = g.count;
  std::vector<End> sends, recvs;
  for (int r = 0; r < n; ++r) {
    const auto schedule = pipelined ? algorithm.rank_phases(r, group, bytes) : algorithm.rank_schedule(r, group, bytes);
    first[static_cast<std::size_t>(r) + 1] = first[static_cast<std::size_t>(r)] + static_cast<int>(schedule.size());
    for (std::size_t i = 0; i < schedule.size(); ++i) {
      if (schedule[i].window > 0) return std::nullopt;  // lockstep rounds cannot price a window (gloo_ring)
      const int id = first[static_cast<std::size_t>(r)] + static_cast<int>(i);
      step_rank.push_back(r);
      latency_steps.push_back(schedule[i].latency_steps);
      count.push_back(0);
      for (const auto& op : schedule[i].ops) {
        if (op.peer < 0 || op.peer >= n || op.peer == r)
          throw std::logic_error(fmt::format("ContentionCost: rank {} addresses peer {} in a group of {}", r, op.peer, n));
        if (op.kind == RankOp::Kind::SEND)
          sends.push_back(End{std::int64_t{r} * n + op.peer, id, op.bytes});
        else
          recvs.push_back(End{std::int64_t{op.peer} * n + r, id, op.bytes});
      }
    }
    if (static_cast<std::int64_t>(std::max(sends.size(), recvs.size())) > max_ends) return std::nullopt;
  }
  auto by_pair = [](const End& a, const End& b) { return a.pair < b.pair; };
  std::stable_sort(sends.begin(), sends.end(), by_pair);  // stable: program order within a pair
  std::stable_sort(recvs.begin(), recvs.end(), by_pair);
  if (sends.size() != recvs.size())
    throw std::logic_error(fmt::format("ContentionCost: {} sends but {} receives", sends.size(), recvs.size()));
  auto& transfers = g.transfers;
  transfers.resize(sends.size());
  for (std::size_t k = 0; k < sends.size(); ++k) {
    if (sends[k].pair != recvs[k].pair)
      throw std::logic_error(fmt::format("ContentionCost: a send {} -> {} has no matching receive",
                                         sends[k].pair / n, sends[k].pair % n));
    auto& t = transfers[k];
    t.src = static_cast<int>(sends[k].pair / n);
    t.dst = static_cast<int>(sends[k].pair % n);
    t.send_step = sends[k].step;
    t.recv_step = recvs[k].step;
    t.bytes = sends[k].bytes;
    ++count[static_cast<std::size_t>(t.send_step)];
    ++count[static_cast<std::size_t>(t.recv_step)];
  }
  return g;
}

std::vector<int> order_transfers(ScheduleGraph& graph) {
  const int n = graph.ranks;
  const auto& first = graph.first;
  const auto& step_rank = graph.step_rank;
  const auto& count = graph.count;
  auto& transfers = graph.transfers;
  const auto steps = step_rank.size();
  // Transfers of each step (both sides), CSR.
  std::vector<std::size_t> offset(steps + 1, 0);
  for (std::size_t s = 0; s < steps; ++s) offset[s + 1] = offset[s] + static_cast<std::size_t>(count[s]);
  std::vector<int> in_step(offset.back());
  {
    std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
    for (std::size_t k = 0; k < transfers.size(); ++k) {
      in_step[fill[static_cast<std::size_t>(transfers[k].send_step)]++] = static_cast<int>(k);
      in_step[fill[static_cast<std::size_t>(transfers[k].recv_step)]++] = static_cast<int>(k);
    }
  }

  // ---- rounds, and a dependency order of the transfers
  std::vector<int> post_round(steps, 0), done_round(steps, 0), remaining(count), sides(transfers.size(), 0);
  std::vector<int> cursor(static_cast<std::size_t>(n), 0);
  std::vector<int> posted;   // steps posted and not yet scanned
  std::vector<int> order;    // transfers, each after every transfer it depends on
  order.reserve(transfers.size());
  auto schedule_size = [&](int r) { return graph.steps_of(r); };
  auto post_next = [&](int r, int round) {  // posts rank r's step at its cursor; empty steps pass through
    for (int& i = cursor[static_cast<std::size_t>(r)]; i < schedule_size(r); ++i) {
      const auto s = static_cast<std::size_t>(first[static_cast<std::size_t>(r)] + i);
      post_round[s] = done_round[s] = round;
      if (count[s] > 0) {
        posted.push_back(static_cast<int>(s));
        return;
      }
    }
  };
  for (int r = 0; r < n; ++r) post_next(r, 0);
  while (!posted.empty()) {
    const auto s = static_cast<std::size_t>(posted.back());
    posted.pop_back();
    for (std::size_t j = offset[s]; j < offset[s + 1]; ++j) {
      auto& t = transfers[static_cast<std::size_t>(in_step[j])];
      if (++sides[static_cast<std::size_t>(in_step[j])] < 2) continue;
      t.round = std::max(post_round[static_cast<std::size_t>(t.send_step)], post_round[static_cast<std::size_t>(t.recv_step)]);
      order.push_back(in_step[j]);
      for (const int q : {t.send_step, t.recv_step}) {
        const auto qs = static_cast<std::size_t>(q);
        done_round[qs] = std::max(done_round[qs], t.round);
        if (--remaining[qs] == 0) {
          const int rank = step_rank[qs];
          ++cursor[static_cast<std::size_t>(rank)];
          post_next(rank, done_round[qs] + 1);
        }
      }
    }
  }
  for (int r = 0; r < n; ++r)
    if (cursor[static_cast<std::size_t>(r)] < schedule_size(r))
      throw std::logic_error(fmt::format("ContentionCost: the schedule deadlocks (rank {} waits at step {})", r,
                                         cursor[static_cast<std::size_t>(r)]));
  return order;
}

}  // namespace ddlsim::models::detail
