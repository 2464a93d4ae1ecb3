// Decentralised training's numerics (models/convergence/peer_training.hpp): mixing with what the
// simulation delivered, the sent values it keeps, and the evaluation of the workers' mean.
#include "models/convergence/peer_training.hpp"
#include "models/convergence/random.hpp"

#include <doctest/doctest.h>
#include <memory>

using namespace ddlsim::models::convergence;

namespace {

std::shared_ptr<const Dataset> toy(std::size_t n, int d) {
  auto data = std::make_shared<Dataset>();
  data->name = "toy";
  data->features = d;
  data->classes = 3;
  Rng rng(7);
  for (std::size_t i = 0; i < n + n / 4; ++i) {
    const auto label = static_cast<std::uint8_t>(rng.below(3));
    auto& x = i < n ? data->train_x : data->test_x;
    for (int j = 0; j < d; ++j) x.push_back(static_cast<float>(rng.uniform() + (j % 3 == label ? 0.5 : 0.0)));
    (i < n ? data->train_y : data->test_y).push_back(label);
  }
  return data;
}

Settings settings(int every = 1) {
  Settings s;
  s.learning_rate = 0.3;
  s.evaluate_every_iterations = every;
  return s;
}

constexpr int WHOLE = PeerTraining::WHOLE;

}  // namespace

TEST_CASE("three workers that each mix with both others every iteration train exactly as bsp") {
  // Synchronous gossip where every worker's in-peers are all the others: the mix is the mean of
  // the stepped models, x <- mean_w (x - lr g_w(x)) = x - lr mean_w g_w(x), bsp's step.
  const auto data = toy(300, 6);
  CoSimulation bsp(data, settings(), Rule{}, 3, 8, 11);
  CoSimulation base(data, settings(), Rule{Rule::Kind::PEER}, 3, 8, 11);
  std::vector<Point> points;
  PeerTraining peers(base, 3, 25, [&points](const Point& p) { points.push_back(p); });
  for (int k = 0; k < 25; ++k) {
    (void)bsp.iteration(k, k, k == 24);
    for (int w = 0; w < 3; ++w) {
      peers.gradient(w);
      peers.step(w);
      peers.publish(w, WHOLE, k, {(w + 1) % 3, (w + 2) % 3});
    }
    for (int w = 0; w < 3; ++w) peers.mix(w, WHOLE, {{(w + 1) % 3, k}, {(w + 2) % 3, k}});
    for (int w = 0; w < 3; ++w) peers.iteration_end(w, k, k + 0.1 * w);
  }
  for (int w = 0; w < 3; ++w)
    CHECK((peers.parameters(w) - bsp.parameters()).cwiseAbs().maxCoeff() <= 1e-9);
  REQUIRE(points.size() == 25);
  CHECK(points.back().time_s == doctest::Approx(24.2));  // when the last worker ended it
  CHECK(points.back().epochs == doctest::Approx(25.0 * 3 * 8 / 300));
  CHECK(points.back().test_loss == doctest::Approx(bsp.evaluate(bsp.parameters()).loss).epsilon(1e-9));
  CHECK(peers.kept() == 3);  // each worker's newest model: older ones were read past by both receivers
}

TEST_CASE("mix averages a tensor with the delivered versions and an unheard peer adds the initial model or zeros") {
  const auto data = toy(60, 4);
  Settings s = settings();
  s.hidden_units = 3;  // an mlp: its initial weights are not zero
  CoSimulation base(data, s, Rule{Rule::Kind::PEER}, 3, 4, 2);
  PeerTraining peers(base, 3, 10, [](const Point&) {});
  REQUIRE(peers.tensors() == 4);  // hidden.weight, hidden.bias, out.weight, out.bias
  CHECK(peers.elements(0) == 12);
  CHECK(peers.elements(2) == 9);
  CHECK(peers.elements(WHOLE) == 12 + 3 + 9 + 3);
  const Vector x0 = base.initial();
  peers.gradient(1);
  peers.step(1);
  peers.publish(1, 0, 0, {0});
  const Vector sent = peers.parameters(1).segment(0, 12);
  peers.gradient(1);
  peers.step(1);  // what worker 1 holds now is not what it sent
  peers.mix(0, 0, {{1, 0}, {2, -1}}, PeerTraining::Unheard::INITIAL);
  CHECK((peers.parameters(0).segment(0, 12) - (x0.segment(0, 12) + sent + x0.segment(0, 12)) / 3).cwiseAbs().maxCoeff() <= 1e-15);
  CHECK((peers.parameters(0).segment(12, 15) - x0.segment(12, 15)).cwiseAbs().maxCoeff() == 0.0);  // other tensors untouched
  const Vector before = peers.parameters(2).segment(0, 12);
  peers.mix(2, 0, {{1, 0}, {0, -1}}, PeerTraining::Unheard::ZERO);
  CHECK((peers.parameters(2).segment(0, 12) - (before + sent) / 3).cwiseAbs().maxCoeff() <= 1e-15);
  CHECK(peers.norm(2, 0) == doctest::Approx(((before + sent) / 3).norm()));
  CHECK_THROWS_WITH(peers.mix(0, 0, {{1, 5}}), "co-simulation: worker 0 read tensor 0 version 5 of worker 1, which is not kept");
}

TEST_CASE("a sent value is dropped once every receiver has read a newer one") {
  const auto data = toy(60, 4);
  CoSimulation base(data, settings(), Rule{Rule::Kind::PEER}, 3, 4, 2);
  PeerTraining peers(base, 3, 20, [](const Point&) {});
  for (int v = 0; v < 10; ++v) peers.publish(0, WHOLE, v, {1, 2});
  CHECK(peers.kept() == 10);
  peers.mix(1, WHOLE, {{0, 9}});
  CHECK(peers.kept() == 10);  // worker 2 may still read any of them
  peers.mix(2, WHOLE, {{0, 5}});
  CHECK(peers.kept() == 5);  // 5 .. 9
  peers.mix(2, WHOLE, {{0, 9}});
  CHECK(peers.kept() == 1);
  CHECK_THROWS_WITH(peers.publish(0, WHOLE, 9, {1}), "co-simulation: worker 0 sent tensor -1 version 9 twice");
}

TEST_CASE("an evaluation is the mean of the workers each after its own iteration k once the last has ended k") {
  const auto data = toy(200, 5);
  CoSimulation base(data, settings(2), Rule{Rule::Kind::PEER}, 2, 4, 3);
  std::vector<Point> points;
  PeerTraining peers(base, 2, 5, [&points](const Point& p) { points.push_back(p); });
  // Worker 0 runs three iterations ahead of worker 1 (no mixing: only the evaluation is tested).
  std::vector<Vector> at1;
  for (int k = 0; k < 5; ++k) {
    peers.gradient(0);
    peers.step(0);
    if (k == 1) at1.push_back(peers.parameters(0));
    peers.iteration_end(0, k, 10.0 + k);
  }
  CHECK(points.empty());
  for (int k = 0; k < 5; ++k) {
    peers.gradient(1);
    peers.step(1);
    if (k == 1) at1.push_back(peers.parameters(1));
    peers.iteration_end(1, k, 1.0 + k);
    if (k == 1) {
      REQUIRE(points.size() == 1);
      CHECK(points[0].iteration == 1);
      CHECK(points[0].time_s == 11.0);
      CHECK(points[0].test_accuracy == base.evaluate((at1[0] + at1[1]) / 2).accuracy);
      CHECK(points[0].test_loss == doctest::Approx(base.evaluate((at1[0] + at1[1]) / 2).loss).epsilon(1e-12));
    }
  }
  REQUIRE(points.size() == 3);  // iterations 1, 3 and the last, 4
  CHECK(points[1].iteration == 3);
  CHECK(points[2].iteration == 4);
  CHECK(points[2].time_s == 14.0);
}
