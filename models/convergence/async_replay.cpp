// ddlsim: parameter-server numerics in the simulated order of updates (see async_replay.hpp).
#include "models/convergence/async_replay.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

namespace ddlsim::models::convergence {
namespace {

using Key = std::pair<int, int>;  // (worker, iteration)

struct Slice {
  Eigen::Index lo = 0, hi = 0;
};

/// Shard (bucket b, server s) -> its parameters: bucket b's share of the bytes, in order, cut in S parts.
std::vector<Slice> slices(Eigen::Index parameters, const std::vector<double>& bucket_bytes, int servers) {
  double total = 0;
  for (double b : bucket_bytes) total += b;
  std::vector<Slice> out;
  double offset = 0;
  auto at = [&](double bytes) {
    return total > 0 ? static_cast<Eigen::Index>(std::llround(static_cast<double>(parameters) * bytes / total)) : 0;
  };
  for (double b : bucket_bytes) {
    for (int s = 0; s < servers; ++s) out.push_back({at(offset + b * s / servers), at(offset + b * (s + 1) / servers)});
    offset += b;
  }
  return out;
}

}  // namespace

std::vector<Point> replay_updates(CoSimulation& sim, const std::vector<Update>& updates,
                                  const std::vector<double>& bucket_bytes, int servers,
                                  const std::vector<AsyncEvaluation>& evaluations) {
  Vector theta = sim.initial();
  const auto shard = slices(theta.size(), bucket_bytes, servers);
  const std::size_t shards = shard.size();
  auto id_of = [&](const Update& u) {
    const auto id = static_cast<std::size_t>(u.bucket) * static_cast<std::size_t>(servers) + static_cast<std::size_t>(u.server);
    if (u.bucket < 0 || u.server < 0 || u.server >= servers || id >= shards)
      throw std::logic_error("replay_updates: an update of a shard outside the plan's buckets and servers");
    return id;
  };

  // First pass: the version of every shard each gradient was computed on, and how many gradients
  // still need each (shard, version) -- the versions kept.
  std::map<Key, std::vector<std::int64_t>> seen;
  std::vector<std::map<std::int64_t, int>> needed(shards);
  for (const auto& u : updates)
    for (const auto& g : u.gradients) {
      auto& v = seen.try_emplace({g.worker, g.iteration}, std::vector<std::int64_t>(shards, -1)).first->second;
      v[id_of(u)] = g.seen_version;
    }
  for (const auto& [key, versions] : seen)
    for (std::size_t id = 0; id < shards; ++id)
      if (versions[id] >= 0) ++needed[id][versions[id]];

  std::vector<std::int64_t> current(shards, 0);
  std::vector<std::map<std::int64_t, Vector>> kept(shards);  // old versions still needed
  for (std::size_t id = 0; id < shards; ++id)
    if (needed[id].count(0) != 0) kept[id][0] = theta.segment(shard[id].lo, shard[id].hi - shard[id].lo);
  struct Pending {
    Vector grad;
    int slices_left = 0;
  };
  std::map<Key, Pending> computed;
  const double lr = sim.settings().learning_rate;
  double loss_sum = 0, loss_samples = 0, samples = 0;

  std::vector<Point> points;
  std::size_t next_eval = 0;
  auto evaluate_until = [&](double t, bool all) {
    for (; next_eval < evaluations.size() && (all || evaluations[next_eval].time_s < t); ++next_eval) {
      Point p;
      p.iteration = evaluations[next_eval].iteration;
      p.time_s = evaluations[next_eval].time_s;
      p.epochs = samples / static_cast<double>(sim.train_size());
      p.train_loss = loss_samples > 0 ? loss_sum / loss_samples : 0;
      const auto score = sim.evaluate(theta);
      p.test_loss = score.loss;
      p.test_accuracy = score.accuracy;
      points.push_back(p);
      loss_sum = loss_samples = 0;
    }
  };

  for (const auto& u : updates) {
    evaluate_until(u.time_s, false);  // evaluations strictly before this update (ties: after it)
    const std::size_t id = id_of(u);
    const Slice sl = shard[id];
    // Every gradient first computed (on the parameters it saw), then applied: an update that takes
    // several (ssp's step) must not compute one on a shard half-way through the step.
    for (const auto& g : u.gradients) {
      const Key key{g.worker, g.iteration};
      if (computed.count(key) != 0) continue;
      const auto& versions = seen.at(key);
      Vector at = theta;
      int slices_left = 0;
      for (std::size_t j = 0; j < shards; ++j) {
        if (versions[j] < 0) continue;  // never pushed (a run cut short): the current values
        ++slices_left;
        if (versions[j] != current[j]) at.segment(shard[j].lo, shard[j].hi - shard[j].lo) = kept[j].at(versions[j]);
        if (--needed[j][versions[j]] == 0) {
          needed[j].erase(versions[j]);
          kept[j].erase(versions[j]);
        }
      }
      Pending p;
      loss_sum += sim.worker_gradient(g.worker, at, p.grad);
      loss_samples += static_cast<double>(sim.batch());
      samples += static_cast<double>(sim.batch());
      p.slices_left = slices_left;
      computed.emplace(key, std::move(p));
    }
    for (const auto& g : u.gradients) {
      const auto it = computed.find({g.worker, g.iteration});
      theta.segment(sl.lo, sl.hi - sl.lo) -= lr * it->second.grad.segment(sl.lo, sl.hi - sl.lo);
      if (--it->second.slices_left <= 0) computed.erase(it);
    }
    current[id] = u.version_after;
    if (needed[id].count(current[id]) != 0) kept[id][current[id]] = theta.segment(sl.lo, sl.hi - sl.lo);
  }
  evaluate_until(0, true);
  return points;
}

}  // namespace ddlsim::models::convergence
