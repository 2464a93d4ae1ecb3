// ddlsim: workers simulated once per class of identical workers (sim/worker_classes.hpp).
#include "sim/worker_classes.hpp"

#include "sim/fiber_lane.hpp"
#include "sim/schedule_executor.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <stdexcept>
#include <utility>

namespace ddlsim::sim::detail {

WorkerClasses::WorkerClasses(int workers, const std::vector<double>& speeds, int shown) {
  const auto n = static_cast<std::size_t>(workers);
  std::vector<bool> runs(n, false);
  std::vector<int> representative(n, 0);  // per rank: the lowest rank of its speed
  std::map<double, int> first;            // speed -> the lowest rank that has it
  for (int r = 0; r < workers; ++r) {
    const double speed = speeds.empty() ? 1.0 : speeds[static_cast<std::size_t>(r)];
    const auto [at, fresh] = first.emplace(speed, r);
    representative[static_cast<std::size_t>(r)] = at->second;
    if (fresh || r < shown) runs[static_cast<std::size_t>(r)] = true;
  }
  std::vector<int> slot_of_rank(n, -1);
  for (int r = 0; r < workers; ++r)
    if (runs[static_cast<std::size_t>(r)]) {
      slot_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(simulated_.size());
      simulated_.push_back(r);
    }
  slot_of_.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    slot_of_[r] = runs[r] ? slot_of_rank[r] : slot_of_rank[static_cast<std::size_t>(representative[r])];
  calls_.resize(simulated_.size());
}

int WorkerClasses::slot(int rank) const {
  const auto at = std::lower_bound(simulated_.begin(), simulated_.end(), rank);
  if (at == simulated_.end() || *at != rank) throw std::logic_error(fmt::format("worker {} is not simulated", rank));
  return static_cast<int>(at - simulated_.begin());
}

void WorkerClasses::note_collective(int slot, int bucket, int root, const models::Collective& algorithm, double bytes) {
  auto& mine = calls_.at(static_cast<std::size_t>(slot));
  std::size_t k = 0;
  while (k < mine.distinct.size() && (mine.distinct[k].bucket != bucket || mine.distinct[k].root != root)) ++k;
  if (k == mine.distinct.size()) mine.distinct.push_back(Call{bucket, root, &algorithm, bytes});
  mine.sequence.push_back(static_cast<int>(k));
}

void WorkerClasses::add_traffic(const models::CollectiveGroup& group, std::vector<WorkerRecord>& workers) const {
  const int n = group.workers;
  // What place `me` of a schedule sends: per (algorithm, bytes), by place, computed once.
  struct Places {
    std::vector<TrafficCounters> sends;
    std::vector<char> known;
  };
  std::map<std::pair<const models::Collective*, double>, Places> memo;
  auto traffic = [&](const Call& call, int me) -> const TrafficCounters& {
    auto& places = memo[{call.algorithm, call.bytes}];
    if (places.sends.empty()) {
      places.sends.resize(static_cast<std::size_t>(n));
      places.known.assign(static_cast<std::size_t>(n), 0);
    }
    const auto i = static_cast<std::size_t>(me);
    if (places.known[i] == 0) {
      places.sends[i] = schedule_traffic(call.algorithm->rank_phases(me, group, call.bytes));
      places.known[i] = 1;
    }
    return places.sends[i];
  };
  // A worker counts each call with what it computed at the first call of the same bucket and
  // place in the schedule (sim/analytic_round.cpp): per distinct call, that first one's traffic.
  // Workers whose counts agree call for call have the same totals: summed once per such signature.
  using Signature = std::vector<std::pair<double, std::int64_t>>;
  std::vector<std::map<Signature, std::pair<double, std::int64_t>>> totals(calls_.size());
  Signature signature;
  std::vector<int> places;
  for (int r = 0; r < n; ++r) {
    const auto s = static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(r)]);
    const auto& mine = calls_[s];
    signature.clear();
    places.clear();
    for (std::size_t k = 0; k < mine.distinct.size(); ++k) {
      const auto& call = mine.distinct[k];
      const int me = (r - call.root + n) % n;
      places.push_back(me);
      std::size_t first = 0;
      while (mine.distinct[first].bucket != call.bucket || places[first] != me) ++first;
      const auto& t = traffic(mine.distinct[first], me);
      signature.emplace_back(t.bytes_sent, t.messages_sent);
    }
    auto found = totals[s].find(signature);
    if (found == totals[s].end()) {
      std::pair<double, std::int64_t> sum{0.0, 0};
      for (const int k : mine.sequence) {
        sum.first += signature[static_cast<std::size_t>(k)].first;
        sum.second += signature[static_cast<std::size_t>(k)].second;
      }
      found = totals[s].emplace(signature, sum).first;
    }
    auto& rec = workers.at(static_cast<std::size_t>(r));
    rec.bytes_sent += found->second.first;
    rec.messages_sent += found->second.second;
  }
}

std::string replication_exclusion(const Scenario& scenario) {
  if (auto why = fiber_lane_exclusion(scenario); !why.empty()) return why;
  if (!scenario.training.sync_model->rank_symmetric()) return "the sync model's workers act by rank";
  const auto& st = scenario.training.stragglers;
  if (st.distribution != NoiseDistribution::NONE && st.sigma > 0) return "compute-time noise";
  return {};
}

std::unique_ptr<WorkerClasses> worker_classes(const Scenario& scenario) {
  if (!replication_exclusion(scenario).empty()) return nullptr;
  const int workers = scenario.platform.workers;
  const int shown = scenario.output.timeline ? std::min(scenario.output.timeline_workers, workers) : 0;
  auto classes = std::make_unique<WorkerClasses>(workers, scenario.training.stragglers.speed_factors, shown);
  if (static_cast<int>(classes->simulated().size()) == workers) return nullptr;
  return classes;
}

}  // namespace ddlsim::sim::detail
