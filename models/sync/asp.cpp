// Asynchronous parallel SGD (ASP) with a sharded parameter server.
//
// Each worker replays its iteration and pushes every gradient bucket, in S
// shards, to the S servers as soon as the bucket fills; a server applies each
// push at once (its share of the profile's optimizer_s:
// optimizer_s * bucket_bytes / total_bytes / S), without waiting for other
// workers, and answers that worker with fresh parameters (the pull). Workers
// never wait for each other: a slow worker only contributes fewer updates
// (seed 001: asynchronous training and stale gradients; seed 003: predicting
// throughput of asynchronous parameter-server training from single-node
// traces).
//
// Staleness of an applied gradient = number of updates the shard received
// between the worker's pull of that bucket and the application of its push.
#include "models/sync_model.hpp"

#include <map>

namespace ddlsim::models {
namespace {

class Asp final : public SyncModel {
 public:
  void run_worker(Runtime& rt, const TrainingPlan& plan) const override { run_push_pull_worker(rt, plan); }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_servers = true,
            .compresses_gradients = true,
            .uses_collective = false,
            .synchronous = false};
  }

  void run_server(ServerRuntime& srv, const TrainingPlan& plan) const override {
    const double total = plan.profile->grad_bytes();
    std::map<int, std::int64_t> version;  // bucket -> updates applied to this shard
    for (std::int64_t n = expected_pushes(srv, plan); n > 0; --n) {
      Push push = receive_gradient(srv, plan);
      const double share = total > 0 ? plan.buckets[static_cast<std::size_t>(push.bucket)].bytes / total : 0;
      srv.compute(plan.profile->optimizer_s * share / srv.servers(), "update");
      std::int64_t& v = version[push.bucket];
      srv.record_staleness(v - push.seen_version);
      ++v;
      srv.record_update(push.bucket, {push}, v);
      srv.send_pull(push.worker, push.bucket, shard_bytes(srv, plan, push.bucket), v);
    }
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "asp",
                "asynchronous SGD on sharded parameter servers: push each bucket, server applies at once, pull",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::Asp>(); })
