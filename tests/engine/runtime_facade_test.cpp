// The Runtime facade on SimGrid: subgroup all-reduce, two-sided and one-sided
// point to point, checked in-process with sync models registered here for the
// test, on a star whose times follow from its links.
#include "models/sync_model.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <doctest/doctest.h>
#include <optional>

using namespace ddlsim;
using nlohmann::json;

namespace {

constexpr double LAT = 1e-6, BW = 10e9 / 8, M = 10e6, CALL = 10e-6;

/// What the test models saw, by worker.
struct Seen {
  std::vector<double> done_s = std::vector<double>(4, -1);
  std::vector<std::optional<models::Message>> latest_early = std::vector<std::optional<models::Message>>(4);
  std::vector<std::optional<models::Message>> latest_late = std::vector<std::optional<models::Message>>(4);
};
Seen seen;

/// Workers {0, 1} and {2, 3} all-reduce M bytes in their pair; with 4 workers... see the test.
class SubgroupModel final : public models::SyncModel {
 public:
  void run_worker(models::Runtime& rt, const models::TrainingPlan&) const override {
    rt.iteration_begin(0);
    const int r = rt.rank();
    rt.submit(models::CommRequest{models::CommRequest::Kind::ALLREDUCE, 0, M, r < 2 ? std::vector<int>{0, 1}
                                                                                   : std::vector<int>{2, 3}, 0});
    rt.wait_comm();
    seen.done_s[static_cast<std::size_t>(r)] = rt.now();
    // Then three of the four: {0, 1, 2}.
    if (r < 3) {
      rt.submit(models::CommRequest{models::CommRequest::Kind::ALLREDUCE, 0, M, {0, 1, 2}, 0});
      rt.wait_comm();
    }
    rt.iteration_end(0);
  }
};

/// Worker 0 sends M to worker 1 (blocking), then puts M to worker 1 with version 7;
/// worker 1 receives, then reads latest() at once (nothing has arrived) and after a
/// compute longer than the transfer (the put is there).
class PointToPointModel final : public models::SyncModel {
 public:
  void run_peer_worker(models::Runtime& rt, models::PeerComm& peers, const models::TrainingPlan&) const override {
    rt.iteration_begin(0);
    const auto r = static_cast<std::size_t>(rt.rank());
    if (rt.rank() == 0) {
      peers.send(1, M, 3, 1);
      const auto h = peers.put(1, M, 5, 7);
      peers.wait(h);
      seen.done_s[r] = rt.now();
    } else if (rt.rank() == 1) {
      const auto msg = peers.recv(0, 3);
      CHECK(msg.source == 0);
      CHECK(msg.version == 1);
      CHECK(msg.bytes == M);
      seen.done_s[r] = rt.now();
      seen.latest_early[r] = peers.latest(0, 5);
      rt.compute(1.0, models::Phase::FORWARD, "wait for the put");
      seen.latest_late[r] = peers.latest(0, 5);
    }
    rt.iteration_end(0);
  }
};

}  // namespace

DDLSIM_REGISTER(models::SyncModel, "test_subgroup", "test only", [](ObjectReader&) {
  return std::make_unique<SubgroupModel>();
})
DDLSIM_REGISTER(models::SyncModel, "test_point_to_point", "test only", [](ObjectReader&) {
  return std::make_unique<PointToPointModel>();
})

namespace {

sim::SimulationResult simulate(const std::string& sync, const std::string& granularity) {
  const json doc = {{"name", "facade"},
                    {"platform", {{"topology", "star"}, {"workers", 4}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
                    {"network", {{"fidelity", "flow"}, {"collective_granularity", granularity}}},
                    {"workload", {{"synthetic", {{"layers", 1}, {"forward_s", 0}, {"backward_s", 0}, {"grad_bytes", "10MB"}}},
                                  {"iterations", 1}}},
                    {"training", {{"sync", {{"name", sync}}}}},
                    {"output", {{"timeline", false}}}};
  return sim::simulate(sim::parse_scenario(doc, "."), {});
}

double ring(int k) { return CALL + 2.0 * (k - 1) * 2 * LAT + 2.0 * (k - 1) / k * M / BW; }

}  // namespace

namespace {
void check_subgroups(const char* g) {
  {
    seen = Seen{};
    const auto result = simulate("test_subgroup", g);
    // The pairs share no NIC: each finishes in ring(2).
    for (double t : seen.done_s) CHECK(t == doctest::Approx(ring(2)).epsilon(1e-9));
    for (int w = 0; w < 3; ++w)
      CHECK(result.workers[static_cast<std::size_t>(w)].iterations[0].end_s == doctest::Approx(ring(2) + ring(3)).epsilon(1e-9));
    CHECK(result.workers[3].iterations[0].end_s == doctest::Approx(ring(2)).epsilon(1e-9));
    // Bytes: a ring of k sends 2 (k - 1) / k * M per rank.
    CHECK(result.workers[0].bytes_sent == doctest::Approx(M + 4.0 / 3 * M).epsilon(1e-12));
    CHECK(result.workers[3].bytes_sent == doctest::Approx(M).epsilon(1e-12));
  }
}
}  // namespace

// One engine per process: one granularity per test case.
TEST_CASE("subgroup all-reduce, stepwise: two disjoint pairs at once, then three of four, each its ring's closed form") {
  check_subgroups("stepwise");
}
TEST_CASE("subgroup all-reduce, pipelined: two disjoint pairs at once, then three of four, each its ring's closed form") {
  check_subgroups("pipelined");
}

TEST_CASE("point to point: a blocking send, then a one-sided put read without blocking") {
  seen = Seen{};
  const auto result = simulate("test_point_to_point", "stepwise");
  const double transfer = 2 * LAT + M / BW;
  CHECK(seen.done_s[1] == doctest::Approx(transfer).epsilon(1e-9));         // the receive
  CHECK(seen.done_s[0] == doctest::Approx(2 * transfer).epsilon(1e-9));     // send, then the put's local completion
  CHECK_FALSE(seen.latest_early[1].has_value());                           // the put is still flowing
  REQUIRE(seen.latest_late[1].has_value());                                // it flowed without a receive
  CHECK(seen.latest_late[1]->version == 7);
  CHECK(seen.latest_late[1]->source == 0);
  CHECK(result.workers[0].bytes_sent == doctest::Approx(2 * M));
  CHECK(result.workers[0].messages_sent == 2);
  // Communication busy time: the union of the send and the put, back to back.
  CHECK(result.workers[0].iterations[0].comm_busy_s == doctest::Approx(2 * transfer).epsilon(1e-9));
}
