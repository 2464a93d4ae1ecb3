// Stale-synchronous parallel (SSP) SGD on sharded parameter servers
// (Ho et al., "More effective distributed ML via a stale synchronous parallel
// parameter server", NIPS 2013; seed 001: synchronous, stale-synchronous and
// asynchronous training, w_{t+1} = w_t - eta * sum of gradients computed on
// parameters at most s iterations old).
//
// Workers run asp's loop: replay one iteration, push every gradient bucket in S
// shards as soon as it fills, pull the shard back. Each server keeps, per shard
// (bucket), every worker's clock: how many of its iterations it has pushed
// (models::ServerClocks). A pull from iteration t is answered only once the
// slowest worker's clock on that shard is at least t + 1 - s: a worker more than
// s iterations ahead of the slowest blocks before its pull ("held"; the hold is
// recorded per worker and iteration).
//
// Applying gradients: a server folds every gradient of a shard that it has
// received and not yet applied into one optimizer step (its share of the
// profile's optimizer_s, optimizer_s * bucket_bytes / total_bytes / S) when it
// answers a pull of that shard. With s = 0 this is bsp with aggregation
// "parameter_server" exactly (all N pushes, one step, then every pull); with
// s at least the iteration count it is asp exactly (each push applied and
// answered at once). Staleness of an applied gradient = optimizer steps on its
// shard between the worker's pull and the step that applies it.
#include "models/sync_model.hpp"

#include <limits>
#include <vector>

namespace ddlsim::models {
namespace {

class Ssp final : public SyncModel {
 public:
  explicit Ssp(std::int64_t bound) : bound_(bound) {}

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override { run_push_pull_worker(rt, plan); }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_servers = true,
            .compresses_gradients = true,
            .uses_collective = false,
            .synchronous = false};
  }
  [[nodiscard]] nlohmann::json settings() const override { return {{"staleness_bound", bound_}}; }

  void run_server(ServerRuntime& srv, const TrainingPlan& plan) const override {
    const auto buckets = plan.buckets.size();
    ServerClocks clocks(srv.workers(), static_cast<int>(buckets));
    std::vector<std::vector<Push>> held(buckets);       // pulls not answered yet, in arrival order
    std::vector<std::vector<double>> held_since(buckets);
    std::vector<std::vector<Push>> unapplied(buckets);  // gradients received, not in a step yet
    std::vector<std::int64_t> version(buckets, 0);      // optimizer steps applied to each shard
    std::vector<std::int64_t> scanned_at(buckets, -1);  // the min clock the held pulls were last checked at
    for (std::int64_t n = expected_pushes(srv, plan); n > 0; --n) {
      Push push = receive_gradient(srv, plan);
      const auto b = static_cast<std::size_t>(push.bucket);
      clocks.pushed(push.worker, push.bucket);
      unapplied[b].push_back(push);
      held[b].push_back(push);
      held_since[b].push_back(srv.now());
      // Answer, in arrival order, every pull of this shard that the bound now allows. The pulls
      // held before stay held while the slowest clock has not moved: then only the new one is
      // checked (a scan of every held pull per push grew as workers^2).
      const double released = srv.now();
      const std::int64_t slowest = clocks.min_clock(push.bucket);
      std::size_t kept = slowest == scanned_at[b] ? held[b].size() - 1 : 0;
      scanned_at[b] = slowest;
      for (std::size_t i = kept; i < held[b].size(); ++i) {
        const Push& h = held[b][i];
        if (slowest < static_cast<std::int64_t>(h.iteration) + 1 - bound_) {
          held[b][kept] = h;
          held_since[b][kept++] = held_since[b][i];
          continue;
        }
        if (released > held_since[b][i]) srv.record_held(h, released - held_since[b][i]);
        if (!unapplied[b].empty()) apply(srv, plan, b, unapplied[b], version[b]);
        srv.send_pull(h.worker, h.bucket, shard_bytes(srv, plan, h.bucket), version[b]);
      }
      held[b].resize(kept);
      held_since[b].resize(kept);
    }
  }

 private:
  static void apply(ServerRuntime& srv, const TrainingPlan& plan, std::size_t bucket, std::vector<Push>& gradients,
                    std::int64_t& version) {
    const double total = plan.profile->grad_bytes();
    const double share = total > 0 ? plan.buckets[bucket].bytes / total : 0;
    srv.compute(plan.profile->optimizer_s * share / srv.servers(), "update");
    for (const auto& g : gradients) srv.record_staleness(version - g.seen_version);
    ++version;
    srv.record_update(static_cast<int>(bucket), gradients, version);
    gradients.clear();
  }

  std::int64_t bound_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "ssp",
                "stale-synchronous SGD on sharded parameter servers: a pull waits while its worker is more than "
                "staleness_bound iterations ahead of the slowest",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::Ssp>(
                      params.integer("staleness_bound", 3, 0, std::numeric_limits<std::int32_t>::max()));
                })
