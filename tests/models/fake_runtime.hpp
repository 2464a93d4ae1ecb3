// Test helper: fake Runtime and ServerRuntime for sync models, with no engine.
//
// FakeRuntime runs one worker's loop on a clock that compute() advances; every
// call is logged as a short string ("compute:backward:l0", "submit:allreduce:0:100" (or push_pull, pull),
// "isend:3:100:v2", "wait", ...), so a test can check what a model asks for, in order.
// FakeServerRuntime feeds a scripted sequence of pushes, one per receive_push().
#pragma once

#include "models/logical_graph.hpp"
#include "models/sync_model.hpp"

#include <deque>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::test {

class FakeRuntime final : public models::Runtime, public models::PeerComm {
 public:
  explicit FakeRuntime(int rank = 0, int workers = 1, std::shared_ptr<const models::LogicalGraph> graph = nullptr)
      : rank_(rank), workers_(workers), graph_(std::move(graph)) {}
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int workers() const override { return workers_; }
  [[nodiscard]] int servers() const override { return 0; }
  double now() override { return clock; }
  void compute(double seconds, models::Phase phase, const std::string& label) override {
    clock += seconds;
    log.push_back(fmt::format("compute:{}:{}", models::to_string(phase), label));
  }
  void submit(const models::CommRequest& r) override {
    using K = models::CommRequest::Kind;
    const char* kind = r.kind == K::ALLREDUCE ? "allreduce"
                       : r.kind == K::PUSH_PULL ? "push_pull"
                       : r.kind == K::PULL      ? "pull"
                       : r.kind == K::ALLGATHER ? "allgather"
                                                : "reduce_scatter";
    log.push_back(fmt::format("submit:{}:{}:{}", kind, r.bucket, r.bytes));
    submitted_bytes += r.bytes;
  }
  void wait_comm() override { log.push_back("wait_comm"); }
  void wait_comm_through(int bucket) override { log.push_back(fmt::format("wait_through:{}", bucket)); }
  void iteration_begin(int it) override { log.push_back(fmt::format("begin:{}", it)); }
  void iteration_end(int it) override { log.push_back(fmt::format("end:{}", it)); }
  models::CommHandle isend(int peer, double bytes, int tag, std::int64_t version) override {
    log.push_back(fmt::format("isend:{}:{}:v{}", peer, bytes, version));
    sent_bytes += bytes;
    return open(models::Message{rank_, tag, bytes, version});
  }
  models::CommHandle irecv(int peer, int tag) override {
    log.push_back(fmt::format("irecv:{}", peer));
    return open(models::Message{peer, tag, 0, -1});
  }
  models::CommHandle put(int peer, double bytes, int tag, std::int64_t version) override {
    log.push_back(fmt::format("put:{}:{}:v{}", peer, bytes, version));
    sent_bytes += bytes;
    return open(models::Message{rank_, tag, bytes, version});
  }
  models::Message wait(models::CommHandle h) override {
    log.push_back(fmt::format("wait:{}", h));
    auto m = in_flight.at(h);
    in_flight.erase(h);
    return m;
  }
  std::optional<models::Message> latest(int peer, int tag) override {
    log.push_back(fmt::format("latest:{}", peer));
    auto it = arrived.find({peer, tag});
    if (it == arrived.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] const models::LogicalGraph* graph() const override { return graph_.get(); }
  void record_neighbour_staleness(std::int64_t iterations) override { neighbour_staleness.push_back(iterations); }

  double clock = 0;
  double submitted_bytes = 0, sent_bytes = 0;
  std::vector<std::string> log;
  std::map<models::CommHandle, models::Message> in_flight;
  std::map<std::pair<int, int>, models::Message> arrived;  // (peer, tag) -> what latest() returns
  std::vector<std::int64_t> neighbour_staleness;

  /// The log entries that start with `prefix`.
  [[nodiscard]] std::vector<std::string> only(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& l : log)
      if (l.rfind(prefix, 0) == 0) out.push_back(l);
    return out;
  }

 private:
  models::CommHandle open(models::Message m) {
    in_flight.emplace(next_, m);
    return next_++;
  }
  int rank_, workers_;
  std::shared_ptr<const models::LogicalGraph> graph_;
  models::CommHandle next_ = 0;
};

class FakeServerRuntime final : public models::ServerRuntime {
 public:
  FakeServerRuntime(int workers, int servers, std::deque<models::Push> pushes)
      : workers_(workers), servers_(servers), pushes_(std::move(pushes)) {}
  [[nodiscard]] int server() const override { return 0; }
  [[nodiscard]] int servers() const override { return servers_; }
  [[nodiscard]] int workers() const override { return workers_; }
  double now() override { return clock; }
  void compute(double seconds, const std::string& label) override {
    clock += seconds;
    log.push_back(fmt::format("compute:{}", label));
  }
  models::Push receive_push() override {
    auto p = pushes_.front();
    pushes_.pop_front();
    clock += 1.0;  // one second between pushes, so holds are visible
    log.push_back(fmt::format("push:w{}:b{}:i{}", p.worker, p.bucket, p.iteration));
    return p;
  }
  void send_pull(int worker, int bucket, double, std::int64_t version) override {
    log.push_back(fmt::format("pull:w{}:b{}:v{}", worker, bucket, version));
  }
  void record_staleness(std::int64_t s) override { staleness.push_back(s); }
  void record_update(int bucket, const std::vector<models::Push>& applied, std::int64_t version_after) override {
    updates.push_back({bucket, applied.size(), version_after});
  }
  struct UpdateRecord {
    int bucket;
    std::size_t gradients;
    std::int64_t version_after;
  };
  std::vector<UpdateRecord> updates;
  void record_held(const models::Push& p, double seconds) override {
    log.push_back(fmt::format("held:w{}:i{}:{}s", p.worker, p.iteration, seconds));
  }

  double clock = 0;
  std::vector<std::string> log;
  std::vector<std::int64_t> staleness;

 private:
  int workers_, servers_;
  std::deque<models::Push> pushes_;
};

}  // namespace ddlsim::test
