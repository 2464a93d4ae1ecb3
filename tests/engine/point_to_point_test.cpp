// Point to point on SimGrid (engine/point_to_point.cpp) under a library's costs (network.software):
// o_send before a message is posted, o_recv once a receive has arrived, the payload at bytes / eta
// on the wire, and gloo's receiver-ready handshake (gloo/transport/tcp/pair.cc: a send goes once
// the receive's NOTIFY_RECV_READY has arrived, one path latency after the receive was posted).
// Every expected time is derived here from the star's links: path latency ALPHA = 2 links x 1 us,
// a flow of w wire bytes takes ALPHA + w / BW.
#include "models/software_cost.hpp"
#include "models/sync_model.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace ddlsim;
using nlohmann::json;

namespace {

constexpr double LINK_LAT = 1e-6, ALPHA = 2 * LINK_LAT, BW = 10e9 / 8, M = 10e6, SMALL = 4096;

/// What the test model does and saw.
struct Plan {
  double send_at = 0, recv_at = 0;  // when worker 0 posts its send, worker 1 its receive
  double bytes = M;
  bool put = false;                 // a one-sided put instead of a send
  double compute_after_send = 0;    // worker 0 computes this long between posting its send and waiting for it
  double second_bytes = 0;          // > 0: worker 0 then sends a second message on the same tag
};
Plan plan;
struct Seen {
  double send_done = -1, recv_done = -1, computed = -1;
  double second_received_bytes = -1, second_recv_done = -1;
};
Seen seen;

/// Worker 0 sends (or puts) `plan.bytes` to worker 1 at plan.send_at; worker 1 receives at plan.recv_at.
class OneMessage final : public models::SyncModel {
 public:
  void run_peer_worker(models::Runtime& rt, models::PeerComm& peers, const models::TrainingPlan&) const override {
    rt.iteration_begin(0);
    if (rt.rank() == 0) {
      if (plan.send_at > 0) rt.compute(plan.send_at, models::Phase::FORWARD, "before the send");
      const auto h = plan.put ? peers.put(1, plan.bytes, 5, 1) : peers.isend(1, plan.bytes, 3, 1);
      if (plan.second_bytes > 0) peers.wait(peers.isend(1, plan.second_bytes, 3, 2));
      if (plan.compute_after_send > 0) {
        rt.compute(plan.compute_after_send, models::Phase::BACKWARD, "while the send waits");
        seen.computed = rt.now();
      }
      peers.wait(h);
      seen.send_done = rt.now();
    } else if (rt.rank() == 1 && plan.put) {  // takes the put in once it has surely arrived
      rt.compute(1.0, models::Phase::FORWARD, "wait for the put");
      CHECK(peers.latest(0, 5).has_value());
    } else if (rt.rank() == 1) {
      if (plan.recv_at > 0) rt.compute(plan.recv_at, models::Phase::FORWARD, "before the receive");
      const auto msg = peers.recv(0, 3);
      CHECK(msg.bytes == plan.bytes);
      seen.recv_done = rt.now();
      if (plan.second_bytes > 0) {
        seen.second_received_bytes = peers.recv(0, 3).bytes;
        seen.second_recv_done = rt.now();
      }
    }
    rt.iteration_end(0);
  }
};

}  // namespace

DDLSIM_REGISTER(models::SyncModel, "test_one_message", "test only", [](ObjectReader&) {
  return std::make_unique<OneMessage>();
})

namespace {

void run(const std::string& software) {
  seen = Seen{};
  const json doc = {{"name", "p2p"},
                    {"platform", {{"topology", "star"}, {"workers", 2}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
                    {"network", {{"fidelity", "flow"}, {"software", software}}},
                    {"workload", {{"synthetic", {{"layers", 1}, {"forward_s", 0}, {"backward_s", 0}, {"grad_bytes", "10MB"}}},
                                  {"iterations", 1}}},
                    {"training", {{"sync", {{"name", "test_one_message"}}}}},
                    {"output", {{"timeline", false}}}};
  (void)sim::simulate(sim::parse_scenario(doc, "."), {});
}

const models::SoftwareCost& preset(const std::string& name) {
  static std::map<std::string, models::SoftwareCost> presets;
  auto [it, fresh] = presets.try_emplace(name);
  if (fresh) it->second = *models::software_preset(name);
  return it->second;
}

/// A flow of `bytes` payload under `lib`'s protocol efficiency.
double flow_s(const models::SoftwareCost& lib, double bytes) { return ALPHA + bytes / lib.protocol_efficiency / BW; }

}  // namespace

// One engine per process: one simulation per test case.
TEST_CASE("point to point, ideal library: the data flows once both ends have posted") {
  plan = Plan{0, 1e-3, M, false};
  run("ideal");
  CHECK(seen.recv_done == doctest::Approx(1e-3 + ALPHA + M / BW).epsilon(1e-9));
  CHECK(seen.send_done == doctest::Approx(seen.recv_done).epsilon(1e-12));
}

TEST_CASE("point to point, gloo: a send waits for the receive's ready notice, one path latency after the receive") {
  plan = Plan{0, 1e-3, M, false};
  run("gloo");
  const auto& gloo = preset("gloo");
  REQUIRE(gloo.send_overhead_s > 0);
  REQUIRE(gloo.protocol_efficiency < 1);
  // The receive is posted at 1 ms; its notice reaches the sender at 1 ms + ALPHA; then the data flows.
  const double data_done = 1e-3 + ALPHA + flow_s(gloo, M);
  CHECK(seen.send_done == doctest::Approx(data_done).epsilon(1e-9));
  CHECK(seen.recv_done == doctest::Approx(data_done + gloo.recv_overhead_s).epsilon(1e-9));
}

TEST_CASE("point to point, gloo: a send waiting for its notice does not hold its caller") {
  // gloo queues the send and its device thread sends it when the notice comes (pair.cc 927, 615-640):
  // worker 0 posts at 0 (o_send), computes 2 ms meanwhile; the receive is posted at 5 ms.
  plan = Plan{0, 5e-3, M, false, 2e-3};
  run("gloo");
  const auto& gloo = preset("gloo");
  CHECK(seen.computed == doctest::Approx(gloo.send_overhead_s + 2e-3).epsilon(1e-9));
  const double data_done = 5e-3 + ALPHA + flow_s(gloo, M);
  CHECK(seen.send_done == doctest::Approx(data_done).epsilon(1e-9));
  CHECK(seen.recv_done == doctest::Approx(data_done + gloo.recv_overhead_s).epsilon(1e-9));
}

TEST_CASE("point to point, mpi: an eager message does not overtake a queued one to the same receive queue") {
  // Worker 0 sends 10 MB (above the 64 KiB eager limit), then 4 KiB, same tag, and waits for the
  // small one first; worker 1 receives twice from 5 ms on. The large one leaves when its notice
  // arrives (5 ms + ALPHA); the small one is sent in its turn behind it, without a notice, and is
  // received second: its data moves once the second receive is posted (SimGrid's rendezvous, as
  // every eager message here).
  plan = Plan{0, 5e-3, M, false, 0, SMALL};
  run("mpi");
  const auto& mpi = preset("mpi");
  CHECK(seen.second_received_bytes == SMALL);
  const double big = 5e-3 + ALPHA + flow_s(mpi, M);
  CHECK(seen.recv_done == doctest::Approx(big + mpi.recv_overhead_s).epsilon(1e-9));
  const double small = seen.recv_done + flow_s(mpi, SMALL);
  CHECK(seen.second_recv_done == doctest::Approx(small + mpi.recv_overhead_s).epsilon(1e-9));
  CHECK(seen.send_done == doctest::Approx(small).epsilon(1e-9));
}

TEST_CASE("point to point, gloo: a receive posted early has its notice there, so the send goes after o_send") {
  plan = Plan{1e-3, 0, M, false};
  run("gloo");
  const auto& gloo = preset("gloo");
  // The notice arrived at ALPHA, long before the send: no wait beyond the sender's own overhead.
  const double data_done = 1e-3 + gloo.send_overhead_s + flow_s(gloo, M);
  CHECK(seen.send_done == doctest::Approx(data_done).epsilon(1e-9));
  CHECK(seen.recv_done == doctest::Approx(data_done + gloo.recv_overhead_s).epsilon(1e-9));
}

TEST_CASE("point to point, gloo: a one-sided put pays o_send and the protocol, no handshake, then the target's ack") {
  plan = Plan{0, 0, M, true};
  run("gloo");
  const auto& gloo = preset("gloo");
  // The data has arrived at o_send + flow; the origin learns it one path latency later.
  CHECK(seen.send_done == doctest::Approx(gloo.send_overhead_s + flow_s(gloo, M) + ALPHA).epsilon(1e-9));
}

TEST_CASE("point to point, ideal library: a put completes when its data has arrived") {
  plan = Plan{0, 0, M, true};
  run("ideal");
  CHECK(seen.send_done == doctest::Approx(ALPHA + M / BW).epsilon(1e-9));
}

TEST_CASE("point to point, mpi: a message within the eager limit goes without the handshake") {
  plan = Plan{0, 1e-3, SMALL, false};
  run("mpi");
  const auto& mpi = preset("mpi");
  REQUIRE(SMALL <= mpi.eager_limit_bytes);
  // Posted at o_send; it flows once the receive is posted (the mailbox's rendezvous), no notice awaited.
  const double data_done = 1e-3 + flow_s(mpi, SMALL);
  CHECK(seen.recv_done == doctest::Approx(data_done + mpi.recv_overhead_s).epsilon(1e-9));
}

TEST_CASE("point to point, mpi: above the eager limit the receiver-ready handshake applies") {
  plan = Plan{0, 1e-3, M, false};
  run("mpi");
  const auto& mpi = preset("mpi");
  REQUIRE(M > mpi.eager_limit_bytes);
  const double data_done = 1e-3 + ALPHA + flow_s(mpi, M);
  CHECK(seen.recv_done == doctest::Approx(data_done + mpi.recv_overhead_s).epsilon(1e-9));
}
