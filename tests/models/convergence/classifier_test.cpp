// The classifiers' gradients against central finite differences, and evaluate()'s counting.
#include "models/convergence/classifier.hpp"
#include "models/convergence/random.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace ddlsim::models::convergence;

namespace {

struct Batch {
  Matrix x;
  std::vector<std::uint8_t> y;
};

Batch random_batch(int rows, int features, int classes, std::uint64_t seed) {
  Rng rng(seed);
  Batch b{Matrix(rows, features), {}};
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < features; ++j) b.x(i, j) = rng.uniform();
    b.y.push_back(static_cast<std::uint8_t>(rng.below(static_cast<std::uint64_t>(classes))));
  }
  return b;
}

/// Max over parameters of |analytic - numeric| / max(1, |numeric|) for the summed loss.
double gradient_error(const Classifier& model, const Vector& theta, const Batch& b) {
  Vector grad = Vector::Zero(theta.size());
  (void)model.accumulate(theta, b.x, b.y.data(), grad);
  double worst = 0;
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < theta.size(); ++i) {
    Vector up = theta, down = theta, scratch = Vector::Zero(theta.size());
    up[i] += h;
    down[i] -= h;
    const double numeric = (model.accumulate(up, b.x, b.y.data(), scratch) - model.accumulate(down, b.x, b.y.data(), scratch)) / (2 * h);
    worst = std::max(worst, std::abs(grad[i] - numeric) / std::max(1.0, std::abs(numeric)));
  }
  return worst;
}

}  // namespace

TEST_CASE("softmax regression: parameters and gradient equal to finite differences") {
  const Classifier model(5, 3, 0);
  CHECK(model.parameters() == 3 * 6);
  Rng rng(3);
  Vector theta(model.parameters());
  for (auto& v : theta) v = rng.normal();
  CHECK(gradient_error(model, theta, random_batch(7, 5, 3, 11)) < 1e-6);
  // All-zero parameters: every class equally likely, the loss is ln 3 per sample.
  const Batch b = random_batch(4, 5, 3, 12);
  Vector grad = Vector::Zero(model.parameters());
  CHECK(model.accumulate(model.initial(1), b.x, b.y.data(), grad) == doctest::Approx(4 * std::log(3.0)).epsilon(1e-12));
}

TEST_CASE("mlp: parameters and gradient equal to finite differences") {
  const Classifier model(6, 4, 5);
  CHECK(model.parameters() == 5 * 7 + 4 * 6);
  const Vector theta = model.initial(7);
  CHECK(theta.head(30).squaredNorm() > 0);                // W1 drawn
  CHECK(theta.segment(30, 5).squaredNorm() == 0);         // b1 zero
  CHECK(gradient_error(model, theta + Vector::Constant(theta.size(), 0.01), random_batch(9, 6, 4, 13)) < 1e-6);
  CHECK(model.initial(7) == theta);  // seeded
  CHECK(model.initial(8) != theta);
}

TEST_CASE("evaluate counts the samples whose largest logit is their label") {
  const Classifier model(2, 2, 0);
  // W = identity, b = 0: the class is the larger feature.
  Vector theta = Vector::Zero(model.parameters());
  theta[0] = 1;
  theta[3] = 1;
  Matrix x(4, 2);
  x << 1, 0, 0, 1, 2, 1, 0, 3;
  const std::vector<std::uint8_t> y{0, 1, 1, 1};  // the third is wrong
  const auto s = model.evaluate(theta, x, y.data());
  CHECK(s.accuracy == doctest::Approx(0.75));
  const double expected = (std::log(1 + std::exp(-1.0)) * 2 + std::log(1 + std::exp(1.0)) + std::log(1 + std::exp(-3.0))) / 4;
  CHECK(s.loss == doctest::Approx(expected).epsilon(1e-12));
}
