// ddlsim: logical communication graphs of decentralised (gossip) training, and the
// spectral gap of their mixing matrix.
//
// In decentralised SGD every worker, each iteration, sends its model to its out-peers,
// receives the models of its in-peers and averages them with its own: x_i <- sum_j W_ij x_j,
// where row i of the mixing matrix W puts the uniform weight 1/(|in(i)|+1) on i itself and on
// each in-peer. How fast the workers reach consensus is governed by the spectral gap
// 1 - |lambda_2(W)| (eigenvalues sorted by modulus, lambda_1 = 1). The graphs, on N ranks:
//
//   ring                  in = out = {r-1, r+1} mod N, deduplicated (N = 2: one peer)
//   torus2d               r = row*cols + col; up, down, left, right with wrap-around, deduplicated
//   exponential           out = {r + 2^k mod N : k = 0 .. ceil(log2 N)-1}, in = {r - 2^k mod N}
//   one_peer_exponential  round t: k = t mod ceil(log2 N); out = {r + 2^k}, in = {r - 2^k} (mod N)
//   random_matching       round t: a random matching of the ranks seeded by (seed, t);
//                         in = out = {partner} (N odd: one rank idle each round)
//   custom                in = out = the adjacency of an undirected edge list
//
// Sources: Lian et al., "Can decentralized algorithms outperform centralized algorithms? A case
// study for decentralized parallel stochastic gradient descent" (D-PSGD), NeurIPS 2017 (ring,
// torus, the mixing matrix and its spectral gap); Assran et al., "Stochastic gradient push for
// distributed deep learning" (SGP), ICML 2019, and Ying et al., "Exponential graph is provably
// efficient for decentralized deep training", NeurIPS 2021 (static and one-peer exponential
// graphs); Lian et al., "Asynchronous decentralized parallel stochastic gradient descent"
// (AD-PSGD), ICML 2018 (random matchings / gossip with one random peer).
#pragma once

#include "models/json_reader.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::models {

/// The params of a logical graph as a scenario gives them (read from the sync model's params object).
struct GraphSpec {
  std::string kind = "ring";  // ring | torus2d | exponential | one_peer_exponential | random_matching | custom
  int rows = 0;               // torus2d only: 0 = the most square factorisation rows x cols of N with rows <= cols
  std::vector<std::pair<int, int>> edges;  // custom only: undirected edges between worker ranks
  /// ring and torus2d: false (default) keeps both directions' neighbours even when they are the same
  /// worker (a ring of 2, a torus of 2 rows or columns): one message to each, as D-PSGD's and
  /// EventGraD's codes send to "left" and "right"; true sends once per distinct neighbour.
  bool distinct_neighbours = false;
  std::string path;           // JSON path of the params object, for errors raised once N is known
};

/// The six kinds, in the order error messages list them.
const std::vector<std::string>& logical_graph_kinds();

/// Reads "graph" (one of the six kinds, default "ring"), "rows" (torus2d only; an integer >= 0,
/// refused with another kind) and "edges" (required with custom, refused otherwise; an array of
/// [a, b] pairs of integer ranks >= 0; errors at e.g. /training/sync/params/edges/3/1).
/// What depends on the worker count is checked by build_logical_graph(). Does NOT call params.finish().
GraphSpec read_graph_spec(ObjectReader& params);

/// Built by build_logical_graph(); immutable but for the random_matching cache, which a mutex guards.
/// Peer queries throw std::out_of_range for a rank outside [0, N) or a negative round.
class LogicalGraph {
 public:
  [[nodiscard]] int workers() const { return n_; }
  [[nodiscard]] const std::string& kind() const { return kind_; }
  /// True when the peers change from round to round (one_peer_exponential, random_matching).
  [[nodiscard]] bool time_varying() const;
  /// Ranks `rank` sends its model to in `round` (iteration), ascending, no duplicates, never itself.
  [[nodiscard]] std::vector<int> out_peers(int rank, int round) const;
  /// Ranks whose model `rank` receives and averages in `round`, ascending, no duplicates, never itself.
  [[nodiscard]] std::vector<int> in_peers(int rank, int round) const;
  /// Row `rank` of the mixing matrix W of `round`, sparse: (column, weight) pairs in ascending column
  /// order, `rank` itself included, each weight 1/(|in_peers|+1). Weights sum to 1.
  [[nodiscard]] std::vector<std::pair<int, double>> mixing_row(int rank, int round) const;

  /// torus2d only (0 otherwise): the grid rows x cols actually used.
  [[nodiscard]] int rows() const { return rows_; }
  [[nodiscard]] int cols() const { return cols_; }
  /// one_peer_exponential: ceil(log2 N), the number of rounds after which the peers repeat; 0 otherwise.
  [[nodiscard]] int period() const;

 private:
  friend std::shared_ptr<const LogicalGraph> build_logical_graph(const GraphSpec& spec, int workers,
                                                                 std::uint64_t seed);
  LogicalGraph(std::string kind, int workers, std::uint64_t seed) : kind_(std::move(kind)), n_(workers), seed_(seed) {}
  void check_call(int rank, int round) const;
  /// Static graphs: the out-peers of `r` from the kind's rule (custom: none, the edges are added after).
  [[nodiscard]] std::vector<int> static_out_peers(int r) const;
  /// random_matching: the partner of `rank` in `round` (-1: idle). The matchings of the last
  /// MATCHING_CACHE rounds asked are kept: every rank asks every round, and ranks run a few
  /// rounds apart in a simulation.
  [[nodiscard]] int partner(int rank, int round) const;
  static constexpr std::size_t MATCHING_CACHE = 16;

  std::string kind_;
  int n_ = 0;
  std::uint64_t seed_ = 0;
  int rows_ = 0, cols_ = 0;
  int log2n_ = 0;                          // ceil(log2 N)
  std::vector<std::vector<int>> out_, in_;  // static graphs

  mutable std::mutex cache_mutex_;
  mutable std::vector<std::pair<int, std::vector<int>>> cache_;  // (round, partner of every rank)
  mutable std::size_t next_evicted_ = 0;
};

/// Builds the graph for `workers` (>= 1) ranks. `seed` seeds random_matching. Throws
/// ConfigError(spec.path or a sub-path, message) for what depends on N: torus2d that has no grid
/// rows x cols with rows, cols >= 2 (at .../graph; the message says to use ring), "rows" that does
/// not divide N or leaves rows or cols < 2 (at .../rows; the message lists the valid rows); a custom
/// edge with a rank outside [0, N) (at .../edges/i/j; the message gives the valid range), a self-loop
/// or a duplicate edge (at .../edges/i).
std::shared_ptr<const LogicalGraph> build_logical_graph(const GraphSpec& spec, int workers, std::uint64_t seed);

namespace detail {
/// torus2d's (rows, cols) for `workers`, or ConfigError as build_logical_graph() says (logical_graph_spec.cpp).
std::pair<int, int> torus_shape(const GraphSpec& spec, int workers);
/// A custom graph's edges checked against `workers`: ranks in range, no self-loop, no duplicate.
void check_custom_edges(const GraphSpec& spec, int workers);
}  // namespace detail

struct SpectralGap {
  std::optional<double> value;  // 1 - |lambda_2| of the (mean) mixing matrix; nullopt when not computed
  std::string basis;            // how it was computed, or why not (one line, for summary.json)
};

/// Workers above which spectral_gap() does not run a dense eigensolver: there each takes about
/// 2 s on a 2-core machine (measurements in models/spectral_gap.cpp). The symmetric limit applies
/// to every graph kind (symmetric, undirected or normal W); the general one to a W that is none of these.
inline constexpr int SPECTRAL_GAP_MAX_SYMMETRIC = 2048;
inline constexpr int SPECTRAL_GAP_MAX_GENERAL = 448;

/// Spectral gap 1 - |lambda_2| of the mixing matrix (eigenvalues sorted by modulus, lambda_1 = 1),
/// clamped to [0, 1]. Static graphs: of W. Time-varying graphs: of the mean of W over `rounds`
/// rounds (one_peer_exponential: over its period ceil(log2 N) whatever `rounds`; random_matching:
/// rounds 0 .. rounds-1; rounds < 1 gives nullopt). Dense Eigen SelfAdjointEigenSolver when W is
/// symmetric, similar to a symmetric matrix (undirected graphs: W = D (A + I)) or normal (the
/// exponential graphs: circulant W, moduli = singular values, from W^T W); EigenSolver otherwise.
/// Above SPECTRAL_GAP_MAX_SYMMETRIC workers (or _GENERAL for the EigenSolver): nullopt, the basis
/// naming the limit. N = 1: value 1 (nothing to mix).
SpectralGap spectral_gap(const LogicalGraph& graph, int rounds);

/// The same for any row-stochastic n x n matrix given row-major (tests, future graph kinds);
/// throws std::invalid_argument if the size is not n * n.
SpectralGap spectral_gap_of_matrix(const std::vector<double>& row_major, int n);

}  // namespace ddlsim::models
