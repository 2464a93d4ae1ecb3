// Parameter-server numerics replayed from the servers' updates: each gradient on the parameters
// its worker saw, each shard updated in the simulated order.
#include "models/convergence/async_replay.hpp"
#include "models/convergence/random.hpp"

#include <doctest/doctest.h>
#include <memory>

using namespace ddlsim::models::convergence;

namespace {

std::shared_ptr<const Dataset> toy() {
  auto data = std::make_shared<Dataset>();
  data->features = 4;
  data->classes = 3;
  Rng rng(2);
  for (int i = 0; i < 120; ++i) {
    const auto label = static_cast<std::uint8_t>(rng.below(3));
    auto& x = i < 100 ? data->train_x : data->test_x;
    for (int j = 0; j < 4; ++j) x.push_back(static_cast<float>(rng.uniform() + (j == label ? 0.7 : 0.0)));
    (i < 100 ? data->train_y : data->test_y).push_back(label);
  }
  return data;
}

Settings lr(double rate) {
  Settings s;
  s.learning_rate = rate;
  return s;
}

Rule async() { return Rule{Rule::Kind::ASYNC, 1, 0}; }

}  // namespace

TEST_CASE("asp replay: stale gradients on the versions their workers pulled, in the servers' order") {
  const auto data = toy();
  CoSimulation sim(data, lr(0.5), async(), 2, 5, 7), check(data, lr(0.5), async(), 2, 5, 7);
  // One server, one bucket: w0's iteration 0 (version 0) -> 1, w1's iteration 0 (also on version 0) -> 2,
  // w0's iteration 1 (on version 1, what its pull returned) -> 3.
  const std::vector<Update> updates{{1.0, 0, 0, 1, {{0, 0, 0}}}, {2.0, 0, 0, 2, {{1, 0, 0}}}, {3.0, 0, 0, 3, {{0, 1, 1}}}};
  const auto points = replay_updates(sim, updates, {16.0 * 15}, 1, {{0, 1.5}, {1, 3.0}});
  Vector t0 = check.initial(), g;
  (void)check.worker_gradient(0, t0, g);
  const Vector t1 = t0 - 0.5 * g;
  (void)check.worker_gradient(1, t0, g);  // stale: computed on version 0
  const Vector t2 = t1 - 0.5 * g;
  (void)check.worker_gradient(0, t1, g);
  const Vector t3 = t2 - 0.5 * g;
  REQUIRE(points.size() == 2);
  CHECK(points[0].time_s == 1.5);
  CHECK(points[0].test_loss == doctest::Approx(check.evaluate(t1).loss).epsilon(1e-12));  // after the first update only
  CHECK(points[1].test_loss == doctest::Approx(check.evaluate(t3).loss).epsilon(1e-12));  // the update at 3.0 counts
  CHECK(points[1].epochs == doctest::Approx(3.0 * 5 / 100));
}

TEST_CASE("asp replay with two servers: each shard of the parameters at its own version") {
  const auto data = toy();  // 15 parameters: server 0 holds the first 8 (rounded), server 1 the rest
  CoSimulation sim(data, lr(0.3), async(), 2, 4, 3), check(data, lr(0.3), async(), 2, 4, 3);
  // Server 0 applies w0 then w1; server 1 applies w1 then w0. w0's iteration 1 saw shard 0 at
  // version 1 (only its own) and shard 1 at version 2 (both).
  const std::vector<Update> updates{
      {1.0, 0, 0, 1, {{0, 0, 0}}}, {1.1, 1, 0, 1, {{1, 0, 0}}}, {1.2, 0, 0, 2, {{1, 0, 0}}},
      {1.3, 1, 0, 2, {{0, 0, 0}}}, {2.0, 0, 0, 3, {{0, 1, 1}}}, {2.1, 1, 0, 3, {{0, 1, 2}}}};
  // An evaluation after w0's iteration 1 reached server 0 only.
  const auto points = replay_updates(sim, updates, {60.0}, 2, {{1, 2.05}, {1, 9.0}});
  const Eigen::Index cut = 8;  // llround(15 * 30 / 60)
  Vector theta = check.initial(), g0, g1;
  (void)check.worker_gradient(0, theta, g0);
  (void)check.worker_gradient(1, theta, g1);
  theta -= 0.3 * (g0 + g1);                    // both shards: both gradients, whatever the order
  Vector seen = theta;
  seen.head(cut) = check.initial().head(cut) - 0.3 * g0.head(cut);  // shard 0 at version 1
  (void)check.worker_gradient(0, seen, g0);
  Vector half = theta;
  half.head(cut) -= 0.3 * g0.head(cut);
  theta -= 0.3 * g0;
  REQUIRE(points.size() == 2);
  CHECK(points[0].test_loss == doctest::Approx(check.evaluate(half).loss).epsilon(1e-12));
  CHECK(points[1].test_loss == doctest::Approx(check.evaluate(theta).loss).epsilon(1e-12));
}

TEST_CASE("ssp replay: a step that takes several gradients computes each before applying any") {
  const auto data = toy();
  CoSimulation sim(data, lr(0.2), async(), 2, 5, 1), check(data, lr(0.2), async(), 2, 5, 1);
  const std::vector<Update> updates{{1.0, 0, 0, 1, {{0, 0, 0}, {1, 0, 0}}}};
  const auto points = replay_updates(sim, updates, {60.0}, 1, {{0, 1.0}});
  Vector t0 = check.initial(), g0, g1;
  (void)check.worker_gradient(0, t0, g0);
  (void)check.worker_gradient(1, t0, g1);
  REQUIRE(points.size() == 1);
  CHECK(points[0].test_loss == doctest::Approx(check.evaluate(t0 - 0.2 * (g0 + g1)).loss).epsilon(1e-12));
}
