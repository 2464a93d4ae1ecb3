// The spectral gap 1 - |lambda_2| of a logical graph's mixing matrix, by a dense eigensolver.
//
// W is row-stochastic (uniform weights 1/(|in(i)|+1)), so lambda_1 = 1 and the gap measures how
// fast gossip averaging contracts towards consensus (Lian et al. 2017, D-PSGD: the rate depends on
// rho = |lambda_2|). Time-varying graphs are summarised by the mean of W over their rounds. Only
// the moduli of the eigenvalues are needed, which allows three symmetric routes (Eigen's
// SelfAdjointEigenSolver, eigenvalues only: Householder tridiagonalisation, then implicit QR):
//   1. W symmetric (ring, torus2d and custom with equal degrees, random_matching): W itself.
//   2. Undirected with unequal degrees (custom): W = D (A + I) with D = diag(1/(deg_i + 1)) is
//      similar, by the diagonal D^1/2, to the symmetric M = D^1/2 (A + I) D^1/2, M_ij = sqrt(W_ij W_ji).
//   3. W normal (W W^T = W^T W; the exponential graphs, whose W and mean W are circulant): the
//      moduli of its eigenvalues are its singular values, the square roots of the eigenvalues of
//      the symmetric W^T W.
// Otherwise (no graph kind gives this today): Eigen's EigenSolver (Hessenberg reduction, real Schur).
//
// Limits (SPECTRAL_GAP_MAX_* in models/logical_graph.hpp), measured with -O3, one thread, on the
// 2-core AMD EPYC development machine while another build ran (load ~2.5):
//   spectral_gap(), all included     N = 1024       N = 2048
//     ring                           0.20 s         1.4 - 2.0 s
//     torus2d                        0.22 s         1.4 s
//     random_matching, 10 rounds     0.21 s         1.6 s
//     exponential (route 3)          0.26 s         2.0 s
//     one_peer_exponential (3)       0.35 s         2.2 s
//   SelfAdjointEigenSolver alone on the ring's W: N = 2500: 3.4 s.
//   EigenSolver alone, random stochastic W: N = 384: 0.45 s, 448: 0.47 s, 512: 2.9 s, 600: 0.46 s,
//     768: 5.2 s, 1024: 24 s (multiples of 256 are much slower: cache aliasing); on the
//     exponential graph's W: 384: 0.44 s, 512: 2.1 s, 1024: 16.5 s, 1536: 59 s.
// So the symmetric routes run up to 2048 workers and the EigenSolver up to 448.

#include "models/logical_graph.hpp"

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ddlsim::models {
namespace {

constexpr double TOLERANCE = 1e-12;

/// W, or its mean over rounds 0 .. rounds-1, sparse.
Eigen::SparseMatrix<double> mean_mixing_matrix(const LogicalGraph& graph, int rounds) {
  const int n = graph.workers();
  std::vector<Eigen::Triplet<double>> entries;
  for (int t = 0; t < rounds; ++t)
    for (int i = 0; i < n; ++i)
      for (const auto& [j, weight] : graph.mixing_row(i, t)) entries.emplace_back(i, j, weight / rounds);
  Eigen::SparseMatrix<double> w(n, n);
  w.setFromTriplets(entries.begin(), entries.end());  // sums the duplicates
  return w;
}

/// A static graph whose every rank has in_peers == out_peers: W = D (A + I) with A symmetric.
bool undirected(const LogicalGraph& graph) {
  if (graph.time_varying()) return graph.kind() == "random_matching";
  for (int i = 0; i < graph.workers(); ++i)
    if (graph.in_peers(i, 0) != graph.out_peers(i, 0)) return false;
  return true;
}

double max_abs(const Eigen::MatrixXd& m) { return m.size() == 0 ? 0.0 : m.cwiseAbs().maxCoeff(); }

/// 1 - (the second largest modulus), clamped to [0, 1].
double gap_of(std::vector<double> moduli) {
  std::sort(moduli.begin(), moduli.end(), [](double a, double b) { return a > b; });
  return std::clamp(1.0 - moduli[1], 0.0, 1.0);
}

std::optional<std::vector<double>> symmetric_moduli(const Eigen::MatrixXd& m, bool squared) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(m, Eigen::EigenvaluesOnly);
  if (solver.info() != Eigen::Success) return std::nullopt;
  std::vector<double> moduli;
  for (double lambda : solver.eigenvalues()) moduli.push_back(squared ? std::sqrt(std::max(lambda, 0.0)) : std::abs(lambda));
  return moduli;
}

std::string too_large(int n, int limit, const char* solver) {
  return fmt::format("not computed: {} workers exceed {}, the largest for which the dense {} takes "
                     "about 2 s or less on 2 cores",
                     n, limit, solver);
}

struct Gap {
  std::optional<double> value;
  std::string how;  // or why not
};

/// The gap of a row-stochastic `w`; `undirected`: w = D (A + I) with A symmetric.
Gap gap_of_matrix(const Eigen::SparseMatrix<double>& w, bool is_undirected) {
  const int n = static_cast<int>(w.rows());
  if (n > SPECTRAL_GAP_MAX_SYMMETRIC) return {std::nullopt, too_large(n, SPECTRAL_GAP_MAX_SYMMETRIC, "SelfAdjointEigenSolver")};
  const Eigen::SparseMatrix<double> wt = w.transpose();
  const Eigen::MatrixXd dense(w);
  std::optional<std::vector<double>> moduli;
  std::string how;
  if (max_abs(Eigen::MatrixXd(w - wt)) <= TOLERANCE) {
    moduli = symmetric_moduli(dense, false);
    how = "W is symmetric; dense Eigen SelfAdjointEigenSolver";
  } else if (is_undirected) {
    moduli = symmetric_moduli(dense.cwiseProduct(dense.transpose()).cwiseSqrt(), false);
    how = "W = D (A + I) is similar to the symmetric D^1/2 (A + I) D^1/2; dense Eigen SelfAdjointEigenSolver";
  } else if (const Eigen::SparseMatrix<double> wtw = wt * w; max_abs(Eigen::MatrixXd(wtw - w * wt)) <= TOLERANCE) {
    moduli = symmetric_moduli(Eigen::MatrixXd(wtw), true);
    how = "W is normal, |lambda| = the singular values: dense Eigen SelfAdjointEigenSolver of W^T W";
  } else {
    if (n > SPECTRAL_GAP_MAX_GENERAL) return {std::nullopt, too_large(n, SPECTRAL_GAP_MAX_GENERAL, "EigenSolver")};
    Eigen::EigenSolver<Eigen::MatrixXd> solver(dense, /*computeEigenvectors=*/false);
    if (solver.info() == Eigen::Success) {
      moduli.emplace();
      for (const auto& lambda : solver.eigenvalues()) moduli->push_back(std::abs(lambda));
    }
    how = "W is not symmetric nor normal; dense Eigen EigenSolver";
  }
  if (!moduli) return {std::nullopt, "not computed: the eigensolver did not converge (" + how + ")"};
  return {gap_of(std::move(*moduli)), how};
}

}  // namespace

SpectralGap spectral_gap_of_matrix(const std::vector<double>& row_major, int n) {
  if (n < 1 || row_major.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n))
    throw std::invalid_argument("spectral_gap_of_matrix: expected n * n entries, n >= 1");
  if (n == 1) return {1.0, "1 worker: nothing to mix, gap 1 by convention"};
  Eigen::SparseMatrix<double> w =
      Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(row_major.data(), n, n)
          .sparseView();
  Gap gap = gap_of_matrix(w, false);
  return {gap.value, gap.value ? "1 - |lambda_2| of the given matrix; " + gap.how : gap.how};
}

SpectralGap spectral_gap(const LogicalGraph& graph, int rounds) {
  const int n = graph.workers();
  if (n == 1) return {1.0, "1 worker: nothing to mix, gap 1 by convention"};
  if (n > SPECTRAL_GAP_MAX_SYMMETRIC)  // before building anything of size N^2
    return {std::nullopt, too_large(n, SPECTRAL_GAP_MAX_SYMMETRIC, "SelfAdjointEigenSolver")};
  std::string of = fmt::format("W ({} on {} workers)", graph.kind(), n);
  if (graph.kind() == "one_peer_exponential") {
    rounds = graph.period();
    of = fmt::format("the mean of W over its period, rounds 0..{} ({} on {} workers)", rounds - 1, graph.kind(), n);
  } else if (graph.kind() == "random_matching") {
    if (rounds < 1) return {std::nullopt, "not computed: random_matching averaged over no rounds"};
    of = fmt::format("the mean of W over rounds 0..{} ({} on {} workers)", rounds - 1, graph.kind(), n);
  } else {
    rounds = 1;
  }
  Gap gap = gap_of_matrix(mean_mixing_matrix(graph, rounds), undirected(graph));
  if (!gap.value) return {std::nullopt, gap.how};
  return {gap.value, fmt::format("1 - |lambda_2| of {}; {}", of, gap.how)};
}

}  // namespace ddlsim::models
