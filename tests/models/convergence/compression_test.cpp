// Compressors on the co-simulated gradients (models/convergence/compression.hpp): each against its
// wire format's arithmetic done by hand, error feedback, and the unbiased ones on average.
#include "models/convergence/compression.hpp"

#include <doctest/doctest.h>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

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

TEST_CASE("lwtopk selects per layer with the seed's count and keeps the rest as error") {
  Compression c = make(Compression::Kind::LWTOPK, {32});
  c.layers = {{0, 4}, {4, 4}};
  c.ratio = 0.49;  // max(1, int(4 x 0.49)) = 1 per layer (topk's ceil would keep 2)
  GradientCompression lw(c, 8, 1, 1);
  CHECK(lw.aggregate(0, {vec({5, 1, 1, 1, 0.1, 0.2, 0.3, 0.4})}) == vec({5, 0, 0, 0, 0, 0, 0, 0.4}));
  // Residuals [0, 1, 1, 1 | 0.1, 0.2, 0.3, 0]: each layer's largest (ties: the lower index).
  CHECK(lw.aggregate(1, {Vector::Zero(8)}) == vec({0, 1, 0, 0, 0, 0, 0.3, 0}));
  // One bucket of top-k with the same ratio keeps ceil(8 x 0.49) = 4 of the whole vector instead.
  Compression t = make(Compression::Kind::TOPK, {32});
  t.ratio = 0.49;
  GradientCompression whole(t, 8, 1, 1);
  CHECK(whole.aggregate(0, {vec({5, 1, 1, 1, 0.1, 0.2, 0.3, 0.4})}) == vec({5, 1, 1, 1, 0, 0, 0, 0}));
}

TEST_CASE("mstopk bisects to the threshold that keeps k and fills ties from a random run as the seed") {
  Compression c = make(Compression::Kind::MSTOPK, {32});
  c.ratio = 0.25;  // k = 2 of 8
  c.error_feedback = false;
  // mean |x| = 4, max 10: the second round's threshold 8.5 keeps exactly {10, 9}.
  GradientCompression ms(c, 8, 1, 1);
  CHECK(ms.aggregate(0, {vec({10, -9, 8, 1, 1, 1, 1, 1})}) == vec({10, -9, 0, 0, 0, 0, 0, 0}));
  // Ties: mean 13/8, max 4; every threshold keeps either {4} (k1 = 1) or the four >= 3 (the first,
  // 2.8125, is thres2). The second element is a run of one from l2 = {3, 3, 3} starting at
  // randint(0, 3): one of the three, or none when the start is 3 (the seed's bounds).
  const Vector x = vec({4, 3, 3, 3, 0, 0, 0, 0});
  std::vector<int> seen(4, 0);
  for (int k = 0; k < 400; ++k) {
    const Vector g = ms.aggregate(k, {x});
    CHECK(g[0] == 4);
    const Eigen::Index ties = (g.segment(1, 3).array() == 3).count();
    CHECK(ties <= 1);
    CHECK(g.segment(4, 4) == Vector::Zero(4));
    int which = 3;
    for (int i = 1; i <= 3; ++i)
      if (g[i] == 3) which = i - 1;
    ++seen[static_cast<std::size_t>(which)];
  }
  for (int outcome : seen) CHECK(outcome > 50);  // each of the four about 100 times
}

TEST_CASE("dgc: an exact threshold on a small tensor and a sampled one near k on a large tensor") {
  Compression c = make(Compression::Kind::DGC, {32});
  c.ratio = 0.25;  // n = 8 <= 2 / ratio: every element sampled; threshold the 2nd largest |x|
  c.error_feedback = false;
  GradientCompression small(c, 8, 1, 1);
  CHECK(small.aggregate(0, {vec({1, 5, 2, -5, 3, 0, 0, 0})}) == vec({0, 5, 0, -5, 0, 0, 0, 0}));
  // Three at the threshold 5: the first k = 2 indices are sent.
  CHECK(small.aggregate(1, {vec({5, 1, 5, 5, 0, 0, 0, 0})}) == vec({5, 0, 5, 0, 0, 0, 0, 0}));
  c.ratio = 1;  // compress() passes the tensor through
  GradientCompression dense(c, 8, 1, 1);
  CHECK(dense.aggregate(0, {vec({1, 5, 2, -5, 3, 0, 0, 0})}) == vec({1, 5, 2, -5, 3, 0, 0, 0}));
  // 10,000 normal draws at ratio 0.01 (k = 100): sampled at a stride, then adapted into [0.8 k, 1.3 k]
  // (or cut to the exact top k), and at most k sent.
  Compression big = make(Compression::Kind::DGC, {40000});
  big.ratio = 0.01;
  big.error_feedback = false;
  GradientCompression sampled(big, 10000, 1, 1);
  Vector x(10000);
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i * i)) * std::exp(std::cos(static_cast<double>(i)));
  std::vector<double> mags(x.data(), x.data() + x.size());
  for (double& m : mags) m = std::abs(m);
  std::sort(mags.begin(), mags.end(), std::greater<>());
  for (int k = 0; k < 20; ++k) {
    const Vector g = sampled.aggregate(k, {x});
    const Eigen::Index sent = (g.array() != 0).count();
    CHECK(sent >= 80);
    CHECK(sent <= 100);
    double smallest = 1e300;
    for (Eigen::Index i = 0; i < g.size(); ++i)
      if (g[i] != 0) {
        CHECK(g[i] == x[i]);
        smallest = std::min(smallest, std::abs(g[i]));
      }
    CHECK(smallest >= mags[130 - 1]);  // the threshold kept at most 1.3 k
  }
}

TEST_CASE("threshold sends sign times tau for the density's count and keeps the rest as error") {
  Compression c = make(Compression::Kind::THRESHOLD, {16});
  c.ratio = 0.5;  // density: 2 of 4, tau = the 2nd largest |x|
  GradientCompression t(c, 4, 1, 1);
  CHECK(t.keeps_residuals());
  CHECK(t.aggregate(0, {vec({3, -2, 1, 0.5})}) == vec({2, -2, 0, 0}));
  // Residual [1, 0, 1, 0.5]: tau = 1 on the indices 0 and 2.
  CHECK(t.aggregate(1, {Vector::Zero(4)}) == vec({1, 0, 1, 0}));
}
