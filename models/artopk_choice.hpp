// ddlsim: which collective AR-Topk should use -- the seed's inequalities.
//
// Tyagi & Swany, "Flexible Communication for Optimal Distributed Learning over
// Unpredictable Networks", IEEE BigData 2023 (seed 002), "Communication Cost
// Analysis"; code: github.com/sahiltyagi4/ARTopk,
// flexible_compression/adaptive_moo/run_MOOCompression.py (getLatencyBWCommTime).
//
// M_c (mc_bytes) is the seed's compressed size: the bytes of ONE worker's k top-k
// gradient VALUES (k x 4 in fp32; the seed's code: m * 4 * cr). AR-Topk broadcasts
// the root's k indices (charged M_c too: 4 bytes per index, as in the seed) and
// all-reduces the k values (M_c); the all-gather alternative gathers every
// worker's values AND indices, 2 M_c per worker. With L = ceil(log2 N) (the
// seed's log N; equal for N a power of two) the closed forms are
//
//   t_ARTring = alpha [2(N-1) + L] + M_c beta [2(N-1)/N + L]     (collectives/artopk_ring.cpp)
//   t_ARTtree = 3 alpha L + 3 M_c beta L                         (collectives/artopk_tree.cpp)
//   t_AG      = alpha L + 2 (N-1) M_c beta                       (collectives/bruck_allgather.cpp
//                                                                 with M = 2 N M_c)
//
// The seed states t_AG only through its inequalities; this is the form they
// imply, and the one its code uses. Pairwise, "X beats Y iff alpha/beta < c M_c":
//
//   ring over tree:       c = (L - (N-1)/N) / (N-1 - L)          (+inf for N = 2, 3: N-1 = L)
//   ring over all-gather: c = 1 - 1/N - L / (2(N-1))
//   tree over all-gather: c = (N-1)/L - 3/2
//
// c <= 0 means X never beats Y (tree never beats the all-gather for N <= 4, the
// ring never beats it at N = 2). For a given alpha/beta each pair ties at
// M_c* = (alpha/beta) / c: small M_c favours the all-gather (fewest latencies),
// large M_c the ring (least bandwidth), and the tree wins in between when
// (alpha/beta)/c_tree_over_ag < M_c < (alpha/beta)/c_ring_over_tree.
#pragma once

#include <cstdint>
#include <string>

namespace ddlsim::models {

enum class ArtopkCollective { ARTOPK_RING, ARTOPK_TREE, ALLGATHER };

/// "artopk_ring", "artopk_tree", "allgather".
std::string to_string(ArtopkCollective c);

/// The three closed forms above, in seconds.
struct ArtopkCosts {
  double artopk_ring_s = 0;
  double artopk_tree_s = 0;
  double allgather_s = 0;
};

/// The seed's coefficients c ("X beats Y iff alpha/beta < c M_c") for N workers (N >= 2).
struct ArtopkCoefficients {
  double ring_over_tree = 0;
  double ring_over_allgather = 0;
  double tree_over_allgather = 0;
};

struct ArtopkChoice {
  ArtopkCollective fastest = ArtopkCollective::ALLGATHER;
  ArtopkCosts costs;
  ArtopkCoefficients coefficients;
  /// The seed's three inequalities (strict: a tie goes to the second of the pair).
  bool ring_beats_tree = false;
  bool ring_beats_allgather = false;
  bool tree_beats_allgather = false;
  /// Crossovers for this alpha/beta: the M_c (bytes) at which each pair ties,
  /// (alpha/beta) / c; +inf where the first of the pair never wins (c <= 0), 0 where it always does.
  double ring_tree_mc_bytes = 0;
  double ring_allgather_mc_bytes = 0;
  double tree_allgather_mc_bytes = 0;
};

/// L = ceil(log2 n) (0 for n = 1).
int artopk_log2(int n);

ArtopkCosts artopk_costs(int n, double alpha_s, double beta_s_per_byte, double mc_bytes);

/// Throws std::invalid_argument for n < 2 (nothing to choose).
ArtopkCoefficients artopk_coefficients(int n);

/// Applies the seed's inequalities for n >= 2 workers, latency alpha_s, beta_s_per_byte
/// (> 0) and compressed size mc_bytes: the ring if it beats both others, else the tree if it
/// beats the all-gather and the ring does not beat it, else the all-gather. With n = 1
/// there is nothing to communicate: every cost is 0 and the all-gather is returned.
ArtopkChoice choose_artopk(int n, double alpha_s, double beta_s_per_byte, double mc_bytes);

/// The worker whose top-k indices every worker follows in `iteration` (the seed's index
/// broadcaster): "star" (STAR-Topk) takes the workers round-robin, iteration mod N, as the seed's
/// star_topk.py; "var" (VAR-Topk) takes the worker with the most volatile gradients, which a timing
/// model does not have: a draw seeded by (seed, iteration) stands for it. 0 for a single worker.
int artopk_root(const std::string& selection, int iteration, int workers, std::uint64_t seed);

}  // namespace ddlsim::models
