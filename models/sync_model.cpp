#include "models/sync_model.hpp"

#include "models/logical_graph.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::models {

std::string to_string(Phase phase) {
  switch (phase) {
    case Phase::IO: return "io";
    case Phase::FORWARD: return "forward";
    case Phase::BACKWARD: return "backward";
    case Phase::OPTIMIZER: return "optimizer";
    case Phase::UPDATE: return "update";
    case Phase::ENCODE: return "encode";
    case Phase::DECODE: return "decode";
    case Phase::FRAMEWORK: return "framework";
    case Phase::COPY: return "copy";
  }
  return "?";
}

void WorkerCompute::compute_layers(const std::vector<Layer>& layers, std::size_t first, std::size_t last, Phase phase) {
  if (phase == Phase::FORWARD)
    for (std::size_t k = first; k < last; ++k) compute(layers[k].forward_s, phase, layers[k].name);
  else
    for (std::size_t k = last; k-- > first;) compute(layers[k].backward_s, phase, layers[k].name);
}

void SyncModel::run_worker(Runtime& rt, const TrainingPlan&) const {
  throw std::logic_error(fmt::format("worker {}: this sync model exchanges point to point and runs only on an engine "
                                     "that gives it a PeerComm (SyncModel::run_peer_worker)",
                                     rt.rank()));
}

std::vector<int> PeerComm::out_peers(int round) const {
  const auto* g = graph();
  return g != nullptr ? g->out_peers(rank(), round) : std::vector<int>{};
}

std::vector<int> PeerComm::in_peers(int round) const {
  const auto* g = graph();
  return g != nullptr ? g->in_peers(rank(), round) : std::vector<int>{};
}

WorkerWorkload SyncModel::worker_workload(const Profile& profile, std::int64_t batch, bool /*extrapolate*/) const {
  return WorkerWorkload{profile, batch, profile.iteration_compute_s(), nlohmann::json::object()};
}

ServerClocks::ServerClocks(int workers, int buckets)
    : workers_(workers),
      clocks_(static_cast<std::size_t>(workers) * static_cast<std::size_t>(buckets), 0),
      at_clock_(static_cast<std::size_t>(buckets), std::map<std::int64_t, int>{{0, workers}}) {}

void ServerClocks::pushed(int worker, int bucket) {
  auto& at = at_clock_[static_cast<std::size_t>(bucket)];
  auto& c = clocks_[index(worker, bucket)];
  if (const auto it = at.find(c); --it->second == 0) at.erase(it);
  ++at[++c];
}

std::int64_t ServerClocks::min_clock(int bucket) const {
  const auto& at = at_clock_[static_cast<std::size_t>(bucket)];
  return at.empty() ? 0 : at.begin()->first;
}

std::int64_t expected_pushes(const ServerRuntime& srv, const TrainingPlan& plan) {
  return static_cast<std::int64_t>(srv.workers()) * plan.iterations * static_cast<std::int64_t>(plan.buckets.size());
}

Push receive_gradient(ServerRuntime& srv, const TrainingPlan& plan) {
  Push push = srv.receive_push();
  if (!plan.compression.empty())
    srv.compute(plan.compression.at(static_cast<std::size_t>(push.bucket)).server_decode_s, "decode");
  return push;
}

void exchange_control(Runtime& rt) {
  rt.submit(CommRequest{CommRequest::Kind::PUSH_PULL, CONTROL_BUCKET, CONTROL_BYTES * rt.servers(), {}, 0});
  rt.wait_comm();
}

std::vector<Push> receive_control(ServerRuntime& srv) {
  std::vector<Push> out;
  for (int w = 0; w < srv.workers(); ++w) {
    out.push_back(srv.receive_push());
    if (out.back().bucket != CONTROL_BUCKET)
      throw std::logic_error(fmt::format("server {}: a gradient push from worker {} arrived before every worker's "
                                         "control scalar", srv.server(), out.back().worker));
  }
  return out;
}

void answer_control(ServerRuntime& srv, const std::vector<Push>& controls, std::int64_t version) {
  for (const auto& c : controls) srv.send_pull(c.worker, CONTROL_BUCKET, CONTROL_BYTES, version);
}

double shard_bytes(const ServerRuntime& srv, const TrainingPlan& plan, int bucket) {
  return plan.buckets.at(static_cast<std::size_t>(bucket)).bytes / srv.servers();
}

void run_push_pull_worker(Runtime& rt, const TrainingPlan& plan) {
  for (int it = 0; it < plan.iterations; ++it) {
    rt.iteration_begin(it);
    replay_iteration(rt, plan, CommRequest::Kind::PUSH_PULL, false, it);
    rt.iteration_end(it);
  }
}

void replay_preamble(Runtime& rt, const TrainingPlan& plan) {
  const Profile& p = *plan.profile;
  // Charged first: never hidden behind communication (docs/profiles.md, "Unattributed time").
  if (p.unattributed_s > 0) rt.compute(p.unattributed_s, Phase::FRAMEWORK, "unattributed");
  if (plan.framework_overhead_s > 0) rt.compute(plan.framework_overhead_s, Phase::FRAMEWORK, "framework overhead");
  if (p.io_s > 0) rt.compute(p.io_s, Phase::IO, "io");
}

void replay_forward(Runtime& rt, const TrainingPlan& plan) {
  replay_preamble(rt, plan);
  rt.compute_layers(plan.profile->layers, 0, plan.profile->layers.size(), Phase::FORWARD);
}

double bucket_copy_s(const TrainingPlan& plan, std::size_t b) {
  return plan.copy_bandwidth_Bps > 0 ? plan.buckets.at(b).bytes / plan.copy_bandwidth_Bps : 0.0;
}

namespace {

/// DDP's copies run on the compute stream (docs/scenario.md, "Bucket copies"): into the flat
/// buffer before the bucket is sent, out of it after the last bucket is back.
void copy_in(Runtime& rt, const TrainingPlan& plan, std::size_t b) {
  if (const double t = bucket_copy_s(plan, b); t > 0) rt.compute(t, Phase::COPY, fmt::format("copy in bucket {}", b));
}

void copy_out(Runtime& rt, const TrainingPlan& plan) {
  for (std::size_t b = 0; b < plan.buckets.size(); ++b)
    if (const double t = bucket_copy_s(plan, b); t > 0) rt.compute(t, Phase::COPY, fmt::format("copy out bucket {}", b));
}

}  // namespace

void replay_compute(Runtime& rt, const TrainingPlan& plan, bool optimizer) {
  const Profile& p = *plan.profile;
  replay_forward(rt, plan);
  rt.compute_layers(p.layers, 0, p.layers.size(), Phase::BACKWARD);
  if (optimizer && p.optimizer_s > 0) rt.compute(p.optimizer_s, Phase::OPTIMIZER, "optimizer");
}

void submit_buckets(Runtime& rt, const TrainingPlan& plan, CommRequest::Kind kind) {
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    if (kind != CommRequest::Kind::PULL) copy_in(rt, plan, b);
    rt.submit(CommRequest{kind, static_cast<int>(b), plan.buckets[b].bytes, {}, 0});
  }
}

void wait_buckets(Runtime& rt, const TrainingPlan& plan) {
  rt.wait_comm();
  copy_out(rt, plan);
}

void replay_iteration(Runtime& rt, const TrainingPlan& plan, CommRequest::Kind kind, bool optimizer, int iteration) {
  const Profile& p = *plan.profile;
  const int variant = rt.compression_variant(iteration);
  const auto& compression = variant < 0 ? plan.compression : plan.compression_variants.at(static_cast<std::size_t>(variant));
  const bool compressed = !compression.empty();
  const int root = plan.roots.empty() ? 0 : plan.roots.at(static_cast<std::size_t>(iteration));
  // Copy into the flat buffer and encode on the compute stream, then submit what the collective carries.
  auto submit = [&](std::size_t b) {
    copy_in(rt, plan, b);
    double bytes = plan.buckets[b].bytes;
    if (compressed) {
      const auto& c = compression[b];
      rt.compute(c.encode_s, Phase::ENCODE, "encode bucket " + std::to_string(b));
      bytes = c.comm_bytes;
    }
    rt.submit(CommRequest{kind, static_cast<int>(b), bytes, {}, root});
  };
  replay_forward(rt, plan);
  // Backward from the last layer down; with overlap, bucket `next` is submitted once its lowest
  // layer is done (one bucket per layer at most; the rest after the backward pass).
  std::size_t next = 0;
  for (std::size_t k = p.layers.size(); k > 0;) {
    const bool at_bucket = plan.overlap && next < plan.buckets.size() && plan.buckets[next].last_layer < k;
    const std::size_t stop = at_bucket ? plan.buckets[next].last_layer : 0;
    rt.compute_layers(p.layers, stop, k, Phase::BACKWARD);
    if (at_bucket) submit(next++);
    k = stop;
  }
  for (; next < plan.buckets.size(); ++next) submit(next);
  rt.wait_comm();
  // Decoding waits for the last bucket: it does not overlap later buckets' communication.
  for (std::size_t b = 0; compressed && b < plan.buckets.size(); ++b)
    rt.compute(compression[b].decode_s, Phase::DECODE, "decode bucket " + std::to_string(b));
  copy_out(rt, plan);
  if (optimizer && p.optimizer_s > 0) rt.compute(p.optimizer_s, Phase::OPTIMIZER, "optimizer");
}

}  // namespace ddlsim::models
