// The spectral gap 1 - |lambda_2| of a mixing matrix (models/spectral_gap.cpp), by each of its
// routes (symmetric W, W similar to a symmetric matrix, normal W, the general eigensolver) and its
// limits. Expected gaps come from eigenvalues derived here: a torus's W is
// (I + A_ring(rows) (+) A_ring(cols)) / 5, with eigenvalues (1 + 2 cos(2 pi a / rows) + 2 cos(2 pi b / cols)) / 5;
// a circulant W = sum_o c_o P^o has eigenvalues sum_o c_o exp(2 pi i o k / N).
#include "models/error.hpp"
#include "models/logical_graph.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

const std::string PARAMS = "/training/sync/params";

std::shared_ptr<const LogicalGraph> make(const std::string& kind, int n, int rows = 0, std::uint64_t seed = 7) {
  GraphSpec spec;
  spec.kind = kind;
  spec.rows = rows;
  spec.path = PARAMS;
  return build_logical_graph(spec, n, seed);
}

std::shared_ptr<const LogicalGraph> custom(int n, std::vector<std::pair<int, int>> edges) {
  GraphSpec spec;
  spec.kind = "custom";
  spec.edges = std::move(edges);
  spec.path = PARAMS;
  return build_logical_graph(spec, n, 0);
}

}  // namespace

TEST_CASE("logical graph: random matching gap of the mean W") {
  auto g = make("random_matching", 10, 0, 3);
  // One round: W = (I + P) / 2 for a perfect matching P; each of the N/2 pairs is its own component
  // with eigenvalues 1 and 0, so 1 is repeated and the gap is 0 (one matching does not connect).
  const SpectralGap one = spectral_gap(*g, 1);
  REQUIRE(one.value.has_value());
  CHECK(*one.value == doctest::Approx(0.0).epsilon(1e-9));
  const SpectralGap many = spectral_gap(*g, 50);
  REQUIRE(many.value.has_value());
  CHECK(*many.value > 0.1);
  CHECK(*many.value < 1.0);
  CHECK(many.basis.find("rounds 0..49") != std::string::npos);
  CHECK_FALSE(spectral_gap(*g, 0).value.has_value());
}

TEST_CASE("logical graph: torus2d gap from the eigenvalues of two rings") {
  for (auto [rows, cols] : {std::pair{4, 4}, std::pair{3, 5}, std::pair{5, 6}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    double second = 0;
    for (int a = 0; a < rows; ++a)
      for (int b = 0; b < cols; ++b)
        if (a != 0 || b != 0)
          second = std::max(second, std::abs(1 + 2 * std::cos(2 * std::numbers::pi * a / rows) +
                                             2 * std::cos(2 * std::numbers::pi * b / cols)) / 5);
    const SpectralGap gap = spectral_gap(*make("torus2d", rows * cols, rows), 1);
    REQUIRE(gap.value.has_value());
    CHECK(std::abs(*gap.value - (1 - second)) < 1e-9);
  }
}

TEST_CASE("logical graph: custom gaps - disconnected 0 and complete 1 and a star") {
  const SpectralGap disconnected = spectral_gap(*custom(4, {{0, 1}, {2, 3}}), 1);
  REQUIRE(disconnected.value.has_value());
  CHECK(std::abs(*disconnected.value) < 1e-9);

  std::vector<std::pair<int, int>> all_pairs;
  for (int a = 0; a < 5; ++a)
    for (int b = a + 1; b < 5; ++b) all_pairs.emplace_back(a, b);
  const SpectralGap complete = spectral_gap(*custom(5, all_pairs), 1);  // W = J / 5: eigenvalues 1, 0, 0, 0, 0
  REQUIRE(complete.value.has_value());
  CHECK(std::abs(*complete.value - 1) < 1e-9);

  // Star: centre 0 (weights 1/4), leaves 1..3 (1/2 on itself and on 0). W is not symmetric.
  // Leaf differences (x_0 = 0, sum of leaves 0): eigenvalue 1/2, twice. On (x_0, all leaves y):
  // [[1/4, 3/4], [1/2, 1/2]], eigenvalues 1 and -1/4. So |lambda_2| = 1/2.
  const SpectralGap star = spectral_gap(*custom(4, {{0, 1}, {0, 2}, {0, 3}}), 1);
  REQUIRE(star.value.has_value());
  CHECK(std::abs(*star.value - 0.5) < 1e-9);
  CHECK(star.basis.find("similar") != std::string::npos);
}

TEST_CASE("logical graph: spectral gap edge cases and limits") {
  const SpectralGap one = spectral_gap(*make("ring", 1), 10);
  CHECK(one.value == 1.0);
  CHECK(one.basis.find("nothing to mix") != std::string::npos);
  CHECK(spectral_gap(*make("exponential", 1), 1).value == 1.0);
  CHECK(spectral_gap(*make("random_matching", 1), 1).value == 1.0);

  const SpectralGap big = spectral_gap(*make("ring", SPECTRAL_GAP_MAX_SYMMETRIC + 1), 1);
  CHECK_FALSE(big.value.has_value());
  CHECK(big.basis.find(std::to_string(SPECTRAL_GAP_MAX_SYMMETRIC)) != std::string::npos);

  // A non-normal row-stochastic matrix (lower triangular: eigenvalues 1, 0.5, 0.2) takes EigenSolver.
  const SpectralGap lower = spectral_gap_of_matrix({1, 0, 0, 0.5, 0.5, 0, 0.3, 0.5, 0.2}, 3);
  REQUIRE(lower.value.has_value());
  CHECK(std::abs(*lower.value - 0.5) < 1e-9);
  CHECK(lower.basis.find("EigenSolver") != std::string::npos);
  // Beyond its limit: not computed, naming the limit.
  const int n = SPECTRAL_GAP_MAX_GENERAL + 1;
  std::vector<double> w(static_cast<std::size_t>(n) * n, 0.0);
  w[0] = 1;
  for (int i = 1; i < n; ++i) {
    w[static_cast<std::size_t>(i) * n + i] = 0.5;
    w[static_cast<std::size_t>(i) * n + i - 1] = 0.5;
  }
  const SpectralGap general = spectral_gap_of_matrix(w, n);
  CHECK_FALSE(general.value.has_value());
  CHECK(general.basis.find(std::to_string(SPECTRAL_GAP_MAX_GENERAL)) != std::string::npos);
  CHECK_THROWS_AS(spectral_gap_of_matrix({1, 0, 0}, 2), std::invalid_argument);
}

TEST_CASE("spectral gap of a given matrix: 1 - |1 - 2a| for two ranks, and 1 - cos(pi / N) for a lazy directed cycle") {
  // W = [[1 - a, a], [a, 1 - a]]: eigenvalues 1 and 1 - 2a.
  for (const double a : {0.1, 0.25, 0.5, 0.9}) {
    CAPTURE(a);
    const SpectralGap gap = spectral_gap_of_matrix({1 - a, a, a, 1 - a}, 2);
    REQUIRE(gap.value.has_value());
    CHECK(*gap.value == doctest::Approx(1 - std::abs(1 - 2 * a)).epsilon(1e-12));
    CHECK(gap.basis.find("symmetric") != std::string::npos);
  }
  // W = (I + P) / 2 with P the cyclic shift on N ranks: not symmetric but normal (circulant), with
  // eigenvalues (1 + exp(2 pi i k / N)) / 2 of modulus |cos(pi k / N)|: the second is cos(pi / N).
  for (const int n : {3, 5, 8}) {
    CAPTURE(n);
    std::vector<double> w(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i) {
      w[static_cast<std::size_t>(i) * n + i] = 0.5;
      w[static_cast<std::size_t>(i) * n + (i + 1) % n] = 0.5;
    }
    const SpectralGap gap = spectral_gap_of_matrix(w, n);
    REQUIRE(gap.value.has_value());
    CHECK(*gap.value == doctest::Approx(1 - std::cos(std::numbers::pi / n)).epsilon(1e-9));
    CHECK(gap.basis.find("normal") != std::string::npos);
  }
  // One rank: nothing to mix; a permutation (eigenvalues on the unit circle): no contraction at all.
  CHECK(spectral_gap_of_matrix({1}, 1).value == 1.0);
  const SpectralGap swap = spectral_gap_of_matrix({0, 1, 1, 0}, 2);
  REQUIRE(swap.value.has_value());
  CHECK(*swap.value == doctest::Approx(0.0).epsilon(1e-12));
  CHECK_THROWS_AS(spectral_gap_of_matrix({}, 0), std::invalid_argument);
}
