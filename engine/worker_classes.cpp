// ddlsim: workers simulated once per class of identical workers (engine/worker_classes.hpp).
#include "engine/worker_classes.hpp"

#include "models/rank_traffic.hpp"
#include "engine/simulation.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <stdexcept>
#include <utility>

namespace ddlsim::sim::detail {

WorkerClasses::WorkerClasses(WorkerPartition partition)
    : simulated_(std::move(partition.simulated)), slot_of_(std::move(partition.slot_of)) {
  calls_.resize(simulated_.size());
}

WorkerClasses::WorkerClasses(int workers, const std::vector<double>& speeds, int shown)
    : WorkerClasses(partition_workers(workers, speeds, shown)) {}

int WorkerClasses::slot(int rank) const {
  const auto at = std::lower_bound(simulated_.begin(), simulated_.end(), rank);
  if (at == simulated_.end() || *at != rank) throw std::logic_error(fmt::format("worker {} is not simulated", rank));
  return static_cast<int>(at - simulated_.begin());
}

void WorkerClasses::note_collective(int slot, int bucket, int root, const models::Collective& algorithm, double bytes) {
  auto& mine = calls_.at(static_cast<std::size_t>(slot));
  const auto [at, fresh] =
      mine.index.emplace(std::make_tuple(bucket, root, &algorithm, bytes), static_cast<int>(mine.distinct.size()));
  if (fresh) mine.distinct.push_back(Call{bucket, root, &algorithm, bytes});
  mine.sequence.push_back(at->second);
}

void WorkerClasses::add_traffic(const models::CollectiveGroup& group, std::vector<WorkerRecord>& workers) const {
  const int n = group.workers;
  // What place `me` of a schedule sends: per (algorithm, bytes), by place, computed once.
  struct Places {
    std::vector<models::TrafficCounters> sends;
    std::vector<char> known;
  };
  std::map<std::pair<const models::Collective*, double>, Places> memo;
  auto traffic = [&](const Call& call, int me) -> const models::TrafficCounters& {
    auto& places = memo[{call.algorithm, call.bytes}];
    if (places.sends.empty()) {
      places.sends.resize(static_cast<std::size_t>(n));
      places.known.assign(static_cast<std::size_t>(n), 0);
    }
    const auto i = static_cast<std::size_t>(me);
    if (places.known[i] == 0) {
      places.sends[i] = models::schedule_traffic(call.algorithm->rank_phases(me, group, call.bytes));
      places.known[i] = 1;
    }
    return places.sends[i];
  };
  // A worker counts each call with what its place in that call's schedule sends. Workers whose
  // counts agree call for call have the same totals: summed once per such signature, for the
  // first MAX_SIGNATURES signatures of a slot (AR-Topk's rotating roots give every worker its
  // own); past them, summed for each worker, as it would have summed them.
  constexpr std::size_t MAX_SIGNATURES = 64;
  using Signature = std::vector<std::pair<double, std::int64_t>>;
  std::vector<std::map<Signature, std::pair<double, std::int64_t>>> totals(calls_.size());
  Signature signature;
  for (int r = 0; r < n; ++r) {
    const auto s = static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(r)]);
    const auto& mine = calls_[s];
    signature.clear();
    for (const auto& call : mine.distinct) {
      const auto& t = traffic(call, (r - call.root + n) % n);
      signature.emplace_back(t.bytes_sent, t.messages_sent);
    }
    auto found = totals[s].find(signature);
    std::pair<double, std::int64_t> sum{0.0, 0};
    if (found != totals[s].end()) {
      sum = found->second;
    } else {
      for (const int k : mine.sequence) {
        sum.first += signature[static_cast<std::size_t>(k)].first;
        sum.second += signature[static_cast<std::size_t>(k)].second;
      }
      if (totals[s].size() < MAX_SIGNATURES) totals[s].emplace(signature, sum);
    }
    auto& rec = workers.at(static_cast<std::size_t>(r));
    rec.bytes_sent += sum.first;
    rec.messages_sent += sum.second;
  }
}

std::unique_ptr<WorkerClasses> worker_classes(const Scenario& scenario) {
  const auto& partition = scenario.plan->classes;  // scenario/run_plan.hpp
  if (!partition) return nullptr;
  return std::make_unique<WorkerClasses>(*partition);
}

}  // namespace ddlsim::sim::detail
