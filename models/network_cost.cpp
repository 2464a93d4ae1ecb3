// ddlsim: the contention-aware schedule cost (see network_cost.hpp for the model).
#include "models/network_cost.hpp"
#include "models/software_cost.hpp"

#include "models/collective.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace ddlsim::models {
namespace {

/// One side of a transfer: a SEND or a RECV op, keyed by its (source, destination) pair.
struct End {
  std::int64_t pair = 0;  // source * ranks + destination
  int step = 0;           // flattened step id of the rank that posts it
  double bytes = 0;
};

struct Transfer {
  int src = 0, dst = 0;
  int send_step = 0, recv_step = 0;
  double bytes = 0;
  int round = 0;
  std::int64_t route_offset = 0;
  int hops = 0;
  double latency_s = 0;
  double duration_s = 0;
};

}  // namespace

ContentionCost::ContentionCost(NetworkPaths paths, ContentionLimits limits, ScheduleForm form,
                               std::shared_ptr<const SoftwareCost> software)
    : paths_(std::move(paths)), limits_(limits), form_(form), software_(std::move(software)) {
  if (software_ && software_->ideal()) software_.reset();
  if (paths_.bandwidth_Bps.size() != paths_.latency_s.size())
    throw std::invalid_argument("ContentionCost: one bandwidth and one latency per link");
  if (!paths_.route) throw std::invalid_argument("ContentionCost: no route function");
  for (double bw : paths_.bandwidth_Bps)
    if (!(bw > 0)) throw std::invalid_argument("ContentionCost: link bandwidths must be positive");
}

std::optional<double> ContentionCost::time_s(const Collective& algorithm, const CollectiveGroup& group,
                                             double bytes) const {
  const Key key{&algorithm, group.workers, group.servers, group.ranks_per_node, group.neighbours.get(), bytes};
  {
    std::lock_guard lock(mutex_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  auto t = evaluate(algorithm, group, bytes);
  std::lock_guard lock(mutex_);
  memo_.emplace(key, t);
  return t;
}

const int* ContentionCost::route(int a, int b, int& hops) const {
  const auto n = static_cast<std::size_t>(paths_.ranks);
  if (route_start_.empty()) {
    route_start_.assign(n * n, -1);
    route_length_.assign(n * n, 0);
  }
  const std::size_t i = static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b);
  if (route_start_[i] < 0) {
    const auto links = paths_.route(a, b);
    for (int l : links)
      if (l < 0 || static_cast<std::size_t>(l) >= paths_.bandwidth_Bps.size())
        throw std::logic_error(fmt::format("ContentionCost: route {} -> {} names link {}, not one of the {} links", a,
                                           b, l, paths_.bandwidth_Bps.size()));
    route_start_[i] = static_cast<std::int64_t>(route_links_.size());
    route_length_[i] = static_cast<int>(links.size());
    route_links_.insert(route_links_.end(), links.begin(), links.end());
  }
  hops = route_length_[i];
  return route_links_.data() + route_start_[i];
}

std::optional<double> ContentionCost::evaluate(const Collective& algorithm, const CollectiveGroup& group,
                                               double bytes) const {
  const int n = group.size();
  if (n > limits_.max_ranks) return std::nullopt;
  if (n > paths_.ranks)
    throw std::invalid_argument(
        fmt::format("ContentionCost: the group has {} ranks but the platform routes {}", n, paths_.ranks));

  // ---- every rank's steps, flattened (step id = first[r] + i), and their sends and receives;
  // one rank's schedule at a time, so a large schedule is never held whole
  std::vector<int> first(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int> step_rank, latency_steps, count;
  std::vector<End> sends, recvs;
  for (int r = 0; r < n; ++r) {
    const auto schedule = form_ == ScheduleForm::PIPELINED ? algorithm.rank_phases(r, group, bytes)
                                                           : algorithm.rank_schedule(r, group, bytes);
    first[static_cast<std::size_t>(r) + 1] = first[static_cast<std::size_t>(r)] + static_cast<int>(schedule.size());
    for (std::size_t i = 0; i < schedule.size(); ++i) {
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
    // every transfer crosses at least one link
    if (static_cast<std::int64_t>(std::max(sends.size(), recvs.size())) > limits_.max_flow_hops) return std::nullopt;
  }
  const auto steps = step_rank.size();
  auto by_pair = [](const End& a, const End& b) { return a.pair < b.pair; };
  std::stable_sort(sends.begin(), sends.end(), by_pair);  // stable: program order within a pair
  std::stable_sort(recvs.begin(), recvs.end(), by_pair);
  if (sends.size() != recvs.size())
    throw std::logic_error(fmt::format("ContentionCost: {} sends but {} receives", sends.size(), recvs.size()));
  std::vector<Transfer> transfers(sends.size());
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
  sends = {};
  recvs = {};

  // ---- routes (the memo is shared: held from here on), within the flow-hop budget
  std::lock_guard lock(mutex_);
  std::int64_t flow_hops = 0;
  for (auto& t : transfers) {
    const int* links = route(t.src, t.dst, t.hops);
    t.route_offset = links - route_links_.data();
    flow_hops += t.hops;
    if (flow_hops > limits_.max_flow_hops) return std::nullopt;
  }

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
  auto schedule_size = [&](int r) { return first[static_cast<std::size_t>(r) + 1] - first[static_cast<std::size_t>(r)]; };
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

  // ---- per-round link loads, durations
  int rounds = 0;
  for (const auto& t : transfers) rounds = std::max(rounds, t.round + 1);
  std::vector<std::size_t> round_start(static_cast<std::size_t>(rounds) + 1, 0);
  for (const auto& t : transfers) ++round_start[static_cast<std::size_t>(t.round) + 1];
  for (std::size_t k = 0; k < static_cast<std::size_t>(rounds); ++k) round_start[k + 1] += round_start[k];
  std::vector<int> by_round(transfers.size());
  {
    std::vector<std::size_t> fill(round_start.begin(), round_start.end() - 1);
    for (std::size_t k = 0; k < transfers.size(); ++k)
      by_round[fill[static_cast<std::size_t>(transfers[k].round)]++] = static_cast<int>(k);
  }
  std::vector<int> load(paths_.bandwidth_Bps.size(), 0);
  for (std::size_t k = 0; k < static_cast<std::size_t>(rounds); ++k) {
    for (std::size_t j = round_start[k]; j < round_start[k + 1]; ++j) {
      const auto& t = transfers[static_cast<std::size_t>(by_round[j])];
      for (int h = 0; h < t.hops; ++h) ++load[static_cast<std::size_t>(route_links_[static_cast<std::size_t>(t.route_offset + h)])];
    }
    for (std::size_t j = round_start[k]; j < round_start[k + 1]; ++j) {
      auto& t = transfers[static_cast<std::size_t>(by_round[j])];
      double worst = 0;  // seconds per byte on the most loaded link of the path
      for (int h = 0; h < t.hops; ++h) {
        const auto l = static_cast<std::size_t>(route_links_[static_cast<std::size_t>(t.route_offset + h)]);
        t.latency_s += paths_.latency_s[l];
        worst = std::max(worst, load[l] / paths_.bandwidth_Bps[l]);
      }
      t.duration_s = t.latency_s + (t.bytes > 0 ? t.bytes * worst : 0.0);
      if (software_) {  // as sim/'s executor: the handshake and overheads are latency, the window caps the rate
        double path_beta = 0;
        for (int h = 0; h < t.hops; ++h)
          path_beta = std::max(path_beta, 1.0 / paths_.bandwidth_Bps[static_cast<std::size_t>(
                                                    route_links_[static_cast<std::size_t>(t.route_offset + h)])]);
        const double k = latency_steps[static_cast<std::size_t>(t.send_step)];
        const auto m = software_->message(t.bytes / k, t.latency_s, path_beta);
        t.latency_s = software_->send_overhead_s + software_->recv_overhead_s + m.latency_s;
        t.duration_s = t.latency_s + t.bytes * std::max(worst / software_->protocol_efficiency, m.per_byte_s);
      }
    }
    for (std::size_t j = round_start[k]; j < round_start[k + 1]; ++j) {
      const auto& t = transfers[static_cast<std::size_t>(by_round[j])];
      for (int h = 0; h < t.hops; ++h) load[static_cast<std::size_t>(route_links_[static_cast<std::size_t>(t.route_offset + h)])] = 0;
    }
  }

  // ---- times, in dependency order
  std::vector<double> post_time(steps, 0.0), end_time(steps, 0.0), longest_latency(steps, 0.0);
  remaining = count;
  double makespan = 0;
  // A step is done: its end (plus the extra latencies of a merged entry) posts the rank's next step.
  auto complete = [&](std::size_t s) {
    while (true) {
      const double end = end_time[s] + (latency_steps[s] - 1) * longest_latency[s];
      makespan = std::max(makespan, end);
      const int r = step_rank[s];
      if (static_cast<int>(s) + 1 >= first[static_cast<std::size_t>(r) + 1]) return;
      ++s;
      post_time[s] = end_time[s] = end;
      if (count[s] > 0) return;
    }
  };
  for (int r = 0; r < n; ++r)
    if (schedule_size(r) > 0 && count[static_cast<std::size_t>(first[static_cast<std::size_t>(r)])] == 0)
      complete(static_cast<std::size_t>(first[static_cast<std::size_t>(r)]));
  for (int k : order) {
    const auto& t = transfers[static_cast<std::size_t>(k)];
    const double start =
        std::max(post_time[static_cast<std::size_t>(t.send_step)], post_time[static_cast<std::size_t>(t.recv_step)]);
    const double end = start + t.duration_s;
    for (const int q : {t.send_step, t.recv_step}) {
      const auto qs = static_cast<std::size_t>(q);
      end_time[qs] = std::max(end_time[qs], end);
      longest_latency[qs] = std::max(longest_latency[qs], t.latency_s);
      if (--remaining[qs] == 0) complete(qs);
    }
  }
  return makespan;
}

}  // namespace ddlsim::models
