// Compressors on the co-simulated gradients (models/convergence/compression.hpp): each against its
// wire format's arithmetic done by hand, error feedback, and the unbiased ones on average.
#include "models/convergence/compression.hpp"

#include <doctest/doctest.h>
#include <Eigen/Core>
#include <cmath>

using namespace ddlsim::models::convergence;

namespace {

Compression make(Compression::Kind kind, std::vector<double> buckets) {
  Compression c;
  c.kind = kind;
  c.bucket_bytes = std::move(buckets);
  return c;
}

Vector vec(std::initializer_list<double> v) {
  Vector out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out[i++] = x;
  return out;
}

}  // namespace

TEST_CASE("fp16 and bf16 round each element to nearest and the step takes the mean") {
  GradientCompression half(make(Compression::Kind::FP16, {8}), 2, 2, 1);
  const Vector g = half.aggregate(0, {vec({1.0 / 3, 1e-9}), vec({1.0 / 3, 70000.0})});
  CHECK(g[0] == 0.333251953125);          // 1/3 in half: 0x3555
  CHECK(std::isinf(g[1]));  // 70,000 overflows half (65,504 is the largest); 1e-9 flushes to 0
  GradientCompression brain(make(Compression::Kind::BF16, {8}), 2, 2, 1);
  const Vector b = brain.aggregate(0, {vec({1.0 / 3, 1.0}), vec({1.0 / 3, 3.0})});
  CHECK(b[0] == 0.333984375);  // 1/3 in bfloat16: 0x3eab
  CHECK(b[1] == 2.0);
  CHECK_FALSE(half.keeps_residuals());
}

TEST_CASE("onebit sends signs decoded as the bucket's positive and negative means and keeps the error") {
  GradientCompression onebit(make(Compression::Kind::ONEBIT, {16, 16}), 8, 1, 1);  // two buckets of 4
  const Vector g = onebit.aggregate(0, {vec({3, 1, -2, -4, 5, 5, 5, 5})});
  CHECK(g == vec({2, 2, -3, -3, 5, 5, 5, 5}));
  // The error [1, -1, 1, -1, 0, 0, 0, 0] is added to the next gradient: with a zero gradient it is sent exactly.
  const Vector next = onebit.aggregate(1, {Vector::Zero(8)});
  CHECK(next == vec({1, -1, 1, -1, 0, 0, 0, 0}));
  CHECK(onebit.aggregate(2, {Vector::Zero(8)}) == Vector::Zero(8));
}

TEST_CASE("qsgd and terngrad send quantised values and are unbiased") {
  const Vector x = vec({0.3, -0.1, 0.05, 0.0, -0.6});
  for (const auto kind : {Compression::Kind::QSGD, Compression::Kind::TERNGRAD}) {
    Compression c = make(kind, {20});
    c.levels = 4;
    GradientCompression q(c, 5, 1, 7);
    const double scale = kind == Compression::Kind::QSGD ? x.norm() / 4 : 0.6;  // one quantum
    Vector sum = Vector::Zero(5);
    const int rounds = 20000;
    for (int k = 0; k < rounds; ++k) {
      const Vector s = q.aggregate(k, {x});
      for (Eigen::Index i = 0; i < 5; ++i) {
        const double steps = s[i] / scale;
        CHECK(std::abs(steps - std::round(steps)) < 1e-9);  // a whole number of quanta
        CHECK((s[i] == 0 || (s[i] > 0) == (x[i] > 0)));       // with the element's sign
      }
      sum += s;
    }
    // Unbiased: the mean of the draws is x within 5 standard errors (each draw's spread is at most a quantum).
    CHECK((sum / rounds - x).cwiseAbs().maxCoeff() < 5 * scale / std::sqrt(rounds));
    CHECK(q.aggregate(0, {x}) == q.aggregate(0, {x}));  // seeded per iteration: the same draw again
  }
}

TEST_CASE("powersgd at full rank is the mean gradient exactly and its error feedback sums to zero over workers") {
  // 12 parameters: a 4 x 3 matrix; rank 3 = cols spans it, whatever Q is drawn.
  Compression c = make(Compression::Kind::POWERSGD, {48});
  c.rank = 4;
  GradientCompression p(c, 12, 2, 3);
  const Vector a = vec({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12.5});
  const Vector b = vec({-3, 0, 2, 1, 1, 1, 0, 4, -2, 6, 1, 0});
  const Vector g = p.aggregate(0, {a, b});
  CHECK(((g - (a + b) / 2).cwiseAbs().maxCoeff()) < 1e-12);
  // The residuals are a - mean and b - mean: added to the next gradients (zero), they sum to zero: the step is 0.
  CHECK(p.aggregate(1, {Vector::Zero(12), Vector::Zero(12)}).cwiseAbs().maxCoeff() < 1e-12);
  // Rank 1 approximates: not the mean, and its error is kept for the next step.
  c.rank = 1;
  GradientCompression low(c, 12, 2, 3);
  const Vector approx = low.aggregate(0, {a, b});
  CHECK(((approx - (a + b) / 2).norm()) > 1e-3);
  const Vector second = low.aggregate(1, {Vector::Zero(12), Vector::Zero(12)});
  CHECK(second.norm() > 1e-3);
}

TEST_CASE("artopk takes the root's top-k indices and every worker's values there") {
  Compression c = make(Compression::Kind::ARTOPK, {16});
  c.ratio = 0.5;  // k = 2 of 4
  c.error_feedback = false;
  c.roots = {1, 0};
  GradientCompression ar(c, 4, 2, 1);
  const Vector w0 = vec({9, 0, 0, 8}), w1 = vec({1, 5, -6, 2});
  // Iteration 0: root 1 picks indices 2 and 1 (|-6|, |5|); worker 0 sends 0 there.
  CHECK(ar.aggregate(0, {w0, w1}) == vec({0, 2.5, -3, 0}));
  // Iteration 1: root 0 picks 0 and 3.
  CHECK(ar.aggregate(1, {w0, w1}) == vec({5, 0, 0, 5}));
}
