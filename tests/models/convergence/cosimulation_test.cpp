// The co-simulation's numerics: shards, BSP as the mean of the workers' gradients (one union-batch
// step), local SGD's copies and averages, and when the model is evaluated.
#include "models/convergence/cosimulation.hpp"
#include "models/convergence/random.hpp"

#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

using namespace ddlsim::models::convergence;

namespace {

/// n samples of d features in 3 classes, the class shifting the features' mean (learnable).
std::shared_ptr<const Dataset> toy(std::size_t n, int d) {
  auto data = std::make_shared<Dataset>();
  data->name = "toy";
  data->features = d;
  data->classes = 3;
  Rng rng(5);
  for (std::size_t i = 0; i < n + n / 4; ++i) {
    const auto label = static_cast<std::uint8_t>(rng.below(3));
    auto& x = i < n ? data->train_x : data->test_x;
    for (int j = 0; j < d; ++j) x.push_back(static_cast<float>(rng.uniform() + (j % 3 == label ? 0.5 : 0.0)));
    (i < n ? data->train_y : data->test_y).push_back(label);
  }
  return data;
}

Settings settings(double lr = 0.3) {
  Settings s;
  s.learning_rate = lr;
  return s;
}

}  // namespace

TEST_CASE("iid shards: equal parts and disjoint and every sample dealt") {
  const std::vector<std::uint8_t> labels(103, 0);
  const auto shards = make_shards(labels, 8, Shards::IID, 1);
  REQUIRE(shards.size() == 8);
  std::set<std::uint32_t> seen;
  for (const auto& s : shards) {
    CHECK((s.size() == 12 || s.size() == 13));
    seen.insert(s.begin(), s.end());
  }
  CHECK(seen.size() == 103);
  CHECK(make_shards(labels, 8, Shards::IID, 1) == shards);
  CHECK(make_shards(labels, 8, Shards::IID, 2) != shards);
  CHECK_THROWS_WITH((void)make_shards(labels, 104, Shards::IID, 1), "103 training samples cannot be dealt in 104 shards");
}

TEST_CASE("by_label shards: two pieces of the label-sorted split per worker") {
  std::vector<std::uint8_t> labels;
  for (int c = 0; c < 10; ++c) labels.insert(labels.end(), 100, static_cast<std::uint8_t>(c));
  const auto shards = make_shards(labels, 5, Shards::BY_LABEL, 1);  // 10 pieces of one class each
  std::set<std::uint32_t> seen;
  for (const auto& s : shards) {
    CHECK(s.size() == 200);
    std::set<int> classes;
    for (auto i : s) classes.insert(labels[i]);
    CHECK(classes.size() <= 2);
    seen.insert(s.begin(), s.end());
  }
  CHECK(seen.size() == 1000);
}

TEST_CASE("a worker's batches walk a fresh permutation of its shard each epoch") {
  CoSimulation sim(toy(40, 4), settings(), Rule{}, 4, 3, 9);  // shards of 10
  const auto& shard = sim.shards()[1];
  std::vector<std::uint32_t> epoch;
  for (int k = 0; k < 3; ++k) {
    const auto b = sim.next_batch(1);
    epoch.insert(epoch.end(), b.begin(), b.end());
  }
  const auto fourth = sim.next_batch(1);  // the epoch's last sample, then two of the next epoch
  epoch.push_back(fourth[0]);
  auto a = epoch, b = shard;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  CHECK(a == b);
}

TEST_CASE("bsp: one union-batch step equals the mean of the workers' gradients (1e-6)") {
  const auto data = toy(400, 6);
  const int n = 4, batch = 8;
  CoSimulation sim(data, settings(), Rule{}, n, batch, 3);
  CoSimulation batches(data, settings(), Rule{}, n, batch, 3);  // the same batches, drawn for the check
  const Classifier& model = sim.classifier();
  Vector theta = model.initial(3);
  for (int k = 0; k < 20; ++k) {
    (void)sim.iteration(k, k + 1.0, false);
    Vector mean = Vector::Zero(theta.size());
    for (int w = 0; w < n; ++w) {  // each worker's own mean gradient on its batch
      const auto idx = batches.next_batch(w);
      Matrix x(batch, data->features);
      std::vector<std::uint8_t> y;
      for (int i = 0; i < batch; ++i) {
        for (int j = 0; j < data->features; ++j) x(i, j) = data->train_x[idx[static_cast<std::size_t>(i)] * 6 + static_cast<std::size_t>(j)];
        y.push_back(data->train_y[idx[static_cast<std::size_t>(i)]]);
      }
      Vector g = Vector::Zero(theta.size());
      (void)model.accumulate(theta, x, y.data(), g);
      mean += g / batch;
    }
    theta -= 0.3 * (mean / n);
  }
  CHECK((sim.parameters() - theta).cwiseAbs().maxCoeff() <= 1e-6 * std::max(1.0, theta.cwiseAbs().maxCoeff()));
}

TEST_CASE("local SGD with H = 1 is bsp and with H = 2 the copies agree every second iteration") {
  const auto data = toy(400, 6);
  Rule h1{Rule::Kind::LOCAL_SGD, 1, 0};
  CoSimulation bsp(data, settings(), Rule{}, 4, 8, 3), local(data, settings(), h1, 4, 8, 3);
  for (int k = 0; k < 15; ++k) {
    (void)bsp.iteration(k, k, false);
    (void)local.iteration(k, k, false);
  }
  CHECK((bsp.parameters() - local.parameters()).cwiseAbs().maxCoeff() < 1e-12);

  Rule h2{Rule::Kind::LOCAL_SGD, 2, 1};  // one bsp warm-up iteration, then averages after iterations 2, 4, ...
  CoSimulation sim(data, settings(), h2, 4, 8, 3);
  CHECK(sim.iteration(0, 1.0, false).has_value());   // warm-up: synchronised
  CHECK(!sim.iteration(1, 2.0, false).has_value());  // local step: copies differ, not evaluated
  const auto p = sim.iteration(2, 3.5, false);       // averaged
  REQUIRE(p.has_value());
  CHECK(p->time_s == 3.5);
  CHECK(p->epochs == doctest::Approx(3.0 * 4 * 8 / 400));
}

TEST_CASE("evaluations every k synchronised iterations and at the last and training lowers the loss") {
  Settings s = settings();
  s.evaluate_every_iterations = 3;
  CoSimulation sim(toy(400, 6), s, Rule{}, 2, 16, 1);
  std::vector<int> at;
  std::vector<double> loss;
  for (int k = 0; k < 10; ++k)
    if (const auto p = sim.iteration(k, k, k == 9)) {
      at.push_back(p->iteration);
      loss.push_back(p->test_loss);
    }
  CHECK(at == std::vector<int>{2, 5, 8, 9});
  CHECK(loss.back() < loss.front());
  CHECK(loss.front() < std::log(3.0));  // below chance after three steps
}

TEST_CASE("bsp with topk at ratio 1 is dense bsp and with error feedback keeps what topk left out") {
  const auto data = toy(400, 6);  // 21 parameters
  Compression all{.kind = Compression::Kind::TOPK, .ratio = 1.0, .error_feedback = true, .bucket_bytes = {84.0}, .roots = {}, .layers = {}};
  CoSimulation dense(data, settings(), Rule{}, 3, 8, 4), sparse(data, settings(), Rule{}, 3, 8, 4, all);
  for (int k = 0; k < 10; ++k) {
    (void)dense.iteration(k, k, false);
    (void)sparse.iteration(k, k, false);
  }
  CHECK((dense.parameters() - sparse.parameters()).cwiseAbs().maxCoeff() < 1e-12);

  // Ratio 0.25 on two buckets (12 and 9 parameters: k = 3 and 3), two iterations by hand.
  Compression quarter{.kind = Compression::Kind::TOPK, .ratio = 0.25, .error_feedback = true, .bucket_bytes = {48.0, 36.0}, .roots = {}, .layers = {}};
  CoSimulation sim(data, settings(), Rule{}, 2, 8, 4, quarter), check(data, settings(), Rule{}, 2, 8, 4);
  Vector theta = check.initial();
  std::vector<Vector> residual(2, Vector::Zero(theta.size()));
  for (int k = 0; k < 2; ++k) {
    (void)sim.iteration(k, k, false);
    Vector mean = Vector::Zero(theta.size()), g;
    for (int w = 0; w < 2; ++w) {
      (void)check.worker_gradient(w, theta, g);
      g += residual[static_cast<std::size_t>(w)];
      Vector sent = Vector::Zero(theta.size());
      for (auto [lo, n] : {std::pair<int, int>{0, 12}, {12, 9}}) {
        for (int pick = 0; pick < 3; ++pick) {  // the 3 largest |g| not taken yet
          int best = -1;
          for (int i = lo; i < lo + n; ++i)
            if (sent[i] == 0 && (best < 0 || std::abs(g[i]) > std::abs(g[best]))) best = i;
          sent[best] = g[best];
        }
      }
      residual[static_cast<std::size_t>(w)] = g - sent;
      mean += sent / 2;
    }
    theta -= 0.3 * mean;
  }
  CHECK((sim.parameters() - theta).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("bsp with randomk: every worker sends the same k indices so the step touches k parameters per bucket") {
  const auto data = toy(400, 6);
  Compression random{.kind = Compression::Kind::RANDOMK, .ratio = 0.2, .error_feedback = false, .bucket_bytes = {84.0}, .roots = {}, .layers = {}};  // k = ceil(0.2 x 21) = 5
  CoSimulation sim(data, settings(), Rule{}, 4, 8, 2, random);
  (void)sim.iteration(0, 1.0, false);  // softmax starts at zero: only the k sent entries move
  CHECK((sim.parameters().array() != 0.0).count() == 5);
  CHECK_THROWS_WITH(CoSimulation(data, settings(), Rule{Rule::Kind::LOCAL_SGD, 2, 0}, 4, 8, 2, random),
                    "a compressor is co-simulated with bsp only");
}

TEST_CASE("the gradient noise scale is McCandlish's two-batch estimate from the workers' gradients and bsp trains alike") {
  const auto data = toy(400, 6);
  const int n = 4, batch = 8, every = 3;
  Settings measured = settings();
  measured.noise_scale = true;
  measured.evaluate_every_iterations = every;
  Settings plain = settings();
  plain.evaluate_every_iterations = every;
  CoSimulation sim(data, measured, Rule{}, n, batch, 3), reference(data, plain, Rule{}, n, batch, 3);
  CoSimulation batches(data, plain, Rule{}, n, batch, 3);  // the same batches, for the estimate by hand
  Vector theta = sim.initial();
  double trace = 0, norm = 0;
  for (int k = 0; k < every; ++k) {
    double small = 0;
    Vector sum = Vector::Zero(theta.size()), g;
    for (int w = 0; w < n; ++w) {
      (void)batches.worker_gradient(w, theta, g);
      small += g.squaredNorm() / n;
      sum += g;
    }
    const double big = (sum / n).squaredNorm(), b = batch, nb = batch * n;
    norm += (nb * big - b * small) / (nb - b);
    trace += (small - big) / (1 / b - 1 / nb);
    theta -= 0.3 * (sum / n);
    const auto p = sim.iteration(k, k, false);
    const auto q = reference.iteration(k, k, false);
    REQUIRE(p.has_value() == (k == every - 1));
    if (p) {
      CHECK(p->gradient_noise_scale == doctest::Approx(trace / norm).epsilon(1e-9));
      CHECK(p->test_loss == doctest::Approx(q->test_loss).epsilon(1e-12));
      CHECK(std::isnan(q->gradient_noise_scale));  // not measured
    }
  }
  CHECK((sim.parameters() - reference.parameters()).cwiseAbs().maxCoeff() <= 1e-12);
}

TEST_CASE("selective_sync: delta 0 averages every iteration as bsp and a large delta only where a worker flags") {
  const auto data = toy(400, 6);
  Rule every{Rule::Kind::SELSYNC};
  every.delta = 0;
  CoSimulation sel(data, settings(), every, 4, 8, 3), bsp(data, settings(), Rule{}, 4, 8, 3);
  for (int k = 0; k < 12; ++k) {
    CHECK(sel.step(k));
    (void)bsp.step(k);
  }
  CHECK((sel.parameters() - bsp.parameters()).cwiseAbs().maxCoeff() <= 1e-12);
  // delta 10: a flag needs the norm to change elevenfold; the first iteration always flags.
  Rule rare{Rule::Kind::SELSYNC};
  rare.delta = 10;
  CoSimulation few(data, settings(), rare, 4, 8, 3);
  CHECK(few.step(0));
  int synced = 0;
  for (int k = 1; k < 12; ++k) synced += few.step(k) ? 1 : 0;
  CHECK(synced == 0);
  CHECK_FALSE(few.iteration(12, 1.0, false).has_value());  // not averaged: not evaluated
}

TEST_CASE("ordered_gradients: the m largest-norm workers' gradients are averaged and m = N is bsp") {
  const auto data = toy(400, 6);
  Rule all{Rule::Kind::ORDERED};
  all.m = 4;
  CoSimulation ordered(data, settings(), all, 4, 8, 3), bsp(data, settings(), Rule{}, 4, 8, 3);
  for (int k = 0; k < 10; ++k) {
    CHECK(ordered.step(k));
    (void)bsp.step(k);
  }
  CHECK((ordered.parameters() - bsp.parameters()).cwiseAbs().maxCoeff() <= 1e-12);
  Rule two{Rule::Kind::ORDERED};
  two.m = 2;
  CoSimulation pick(data, settings(), two, 4, 8, 3), batches(data, settings(), Rule{}, 4, 8, 3);
  Vector theta = pick.initial(), g;
  std::vector<Vector> grads;
  std::vector<double> norms;
  for (int w = 0; w < 4; ++w) {
    (void)batches.worker_gradient(w, theta, g);
    grads.push_back(g);
    norms.push_back(g.norm());
  }
  (void)pick.step(0);
  const auto chosen = ddlsim::models::ordered_selection(norms, 2);
  CHECK(pick.selected() == chosen);
  Vector mean = Vector::Zero(theta.size());
  for (int w = 0; w < 4; ++w)
    if (chosen[static_cast<std::size_t>(w)] != 0) mean += grads[static_cast<std::size_t>(w)] / 2;
  CHECK((pick.parameters() - (theta - 0.3 * mean)).cwiseAbs().maxCoeff() <= 1e-12);
}
