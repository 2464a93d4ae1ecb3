// ddlsim: the contention-aware schedule cost (see network_cost.hpp for the model).
#include "models/network_cost.hpp"
#include "models/software_cost.hpp"

#include "models/collective.hpp"
#include "models/schedule_graph.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace ddlsim::models {
namespace {

/// What the contention cost adds to a transfer (models/schedule_graph.hpp): its route and times.
struct Priced {
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

  auto graph = detail::flatten_schedules(algorithm, group, bytes, form_ == ScheduleForm::PIPELINED,
                                        limits_.max_flow_hops);  // every transfer crosses at least one link
  if (!graph) return std::nullopt;
  auto& transfers = graph->transfers;
  std::vector<Priced> priced(transfers.size());

  // ---- routes (the memo is shared: held from here on), within the flow-hop budget
  std::lock_guard lock(mutex_);
  std::int64_t flow_hops = 0;
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    auto& p = priced[k];
    const int* links = route(transfers[k].src, transfers[k].dst, p.hops);
    p.route_offset = links - route_links_.data();
    flow_hops += p.hops;
    if (flow_hops > limits_.max_flow_hops) return std::nullopt;
  }

  const std::vector<int> order = detail::order_transfers(*graph);
  const auto& first = graph->first;
  const auto& step_rank = graph->step_rank;
  const auto& latency_steps = graph->latency_steps;
  const auto& count = graph->count;
  const auto steps = step_rank.size();
  auto schedule_size = [&](int r) { return graph->steps_of(r); };

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
      const auto& p = priced[static_cast<std::size_t>(by_round[j])];
      for (int h = 0; h < p.hops; ++h) ++load[static_cast<std::size_t>(route_links_[static_cast<std::size_t>(p.route_offset + h)])];
    }
    for (std::size_t j = round_start[k]; j < round_start[k + 1]; ++j) {
      const auto& t = transfers[static_cast<std::size_t>(by_round[j])];
      auto& p = priced[static_cast<std::size_t>(by_round[j])];
      double worst = 0;  // seconds per byte on the most loaded link of the path
      for (int h = 0; h < p.hops; ++h) {
        const auto l = static_cast<std::size_t>(route_links_[static_cast<std::size_t>(p.route_offset + h)]);
        p.latency_s += paths_.latency_s[l];
        worst = std::max(worst, load[l] / paths_.bandwidth_Bps[l]);
      }
      p.duration_s = p.latency_s + (t.bytes > 0 ? t.bytes * worst : 0.0);
      if (software_) {  // as sim/'s executor: the handshake and overheads are latency, the window caps the rate
        double path_beta = 0;
        for (int h = 0; h < p.hops; ++h)
          path_beta = std::max(path_beta, 1.0 / paths_.bandwidth_Bps[static_cast<std::size_t>(
                                                    route_links_[static_cast<std::size_t>(p.route_offset + h)])]);
        const double k = latency_steps[static_cast<std::size_t>(t.send_step)];
        const auto m = software_->message(t.bytes / k, p.latency_s, path_beta);
        p.latency_s = software_->send_overhead_s + software_->recv_overhead_s + m.latency_s;
        p.duration_s = p.latency_s + t.bytes * std::max(worst / software_->protocol_efficiency, m.per_byte_s);
      }
    }
    for (std::size_t j = round_start[k]; j < round_start[k + 1]; ++j) {
      const auto& p = priced[static_cast<std::size_t>(by_round[j])];
      for (int h = 0; h < p.hops; ++h) load[static_cast<std::size_t>(route_links_[static_cast<std::size_t>(p.route_offset + h)])] = 0;
    }
  }

  // ---- times, in dependency order
  std::vector<double> post_time(steps, 0.0), end_time(steps, 0.0), longest_latency(steps, 0.0);
  std::vector<int> remaining = count;
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
    const auto& p = priced[static_cast<std::size_t>(k)];
    const double start =
        std::max(post_time[static_cast<std::size_t>(t.send_step)], post_time[static_cast<std::size_t>(t.recv_step)]);
    const double end = start + p.duration_s;
    for (const int q : {t.send_step, t.recv_step}) {
      const auto qs = static_cast<std::size_t>(q);
      end_time[qs] = std::max(end_time[qs], end);
      longest_latency[qs] = std::max(longest_latency[qs], p.latency_s);
      if (--remaining[qs] == 0) complete(qs);
    }
  }
  return makespan;
}

}  // namespace ddlsim::models
