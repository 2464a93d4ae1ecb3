#include "models/artopk_choice.hpp"

#include <random>

#include <limits>
#include <stdexcept>
#include <string>

namespace ddlsim::models {

std::string to_string(ArtopkCollective c) {
  switch (c) {
    case ArtopkCollective::ARTOPK_RING: return "artopk_ring";
    case ArtopkCollective::ARTOPK_TREE: return "artopk_tree";
    case ArtopkCollective::ALLGATHER: return "allgather";
  }
  return "?";
}

int artopk_log2(int n) {
  int l = 0;
  while (l < 31 && (1 << l) < n) ++l;
  return l;
}

ArtopkCosts artopk_costs(int n, double alpha_s, double beta_s_per_byte, double mc_bytes) {
  if (n <= 1) return {};
  const double l = artopk_log2(n), nn = n, m = mc_bytes * beta_s_per_byte;
  return ArtopkCosts{alpha_s * (2 * (nn - 1) + l) + m * (2 * (nn - 1) / nn + l),  // seed: t_ARTring
                     3 * alpha_s * l + 3 * m * l,                                  // seed: t_ARTtree
                     alpha_s * l + 2 * (nn - 1) * m};                              // all-gather of values + indices
}

ArtopkCoefficients artopk_coefficients(int n) {
  if (n < 2) throw std::invalid_argument("artopk_coefficients: need at least 2 workers, got " + std::to_string(n));
  const double l = artopk_log2(n), nn = n;
  const double inf = std::numeric_limits<double>::infinity();
  ArtopkCoefficients c;
  // N - 1 - L = 0 for N = 2, 3: the ring pays no more latencies than the tree and less bandwidth.
  c.ring_over_tree = nn - 1 - l > 0 ? (l - (nn - 1) / nn) / (nn - 1 - l) : inf;
  c.ring_over_allgather = 1 - 1 / nn - l / (2 * (nn - 1));
  c.tree_over_allgather = (nn - 1) / l - 1.5;
  return c;
}

namespace {

/// alpha/beta < c M_c, with c = +inf meaning "whenever M_c > 0".
bool beats(double c, double alpha_over_beta, double mc_bytes) {
  if (c == std::numeric_limits<double>::infinity()) return mc_bytes > 0;
  return alpha_over_beta < c * mc_bytes;
}

/// The M_c at which alpha/beta = c M_c.
double crossover_mc(double c, double alpha_over_beta) {
  if (c <= 0) return std::numeric_limits<double>::infinity();
  if (c == std::numeric_limits<double>::infinity()) return 0.0;
  return alpha_over_beta / c;
}

}  // namespace

ArtopkChoice choose_artopk(int n, double alpha_s, double beta_s_per_byte, double mc_bytes) {
  ArtopkChoice out;
  if (n <= 1) return out;
  if (!(beta_s_per_byte > 0)) throw std::invalid_argument("choose_artopk: beta must be > 0");
  out.costs = artopk_costs(n, alpha_s, beta_s_per_byte, mc_bytes);
  out.coefficients = artopk_coefficients(n);
  const double ratio = alpha_s / beta_s_per_byte;
  out.ring_beats_tree = beats(out.coefficients.ring_over_tree, ratio, mc_bytes);
  out.ring_beats_allgather = beats(out.coefficients.ring_over_allgather, ratio, mc_bytes);
  out.tree_beats_allgather = beats(out.coefficients.tree_over_allgather, ratio, mc_bytes);
  out.ring_tree_mc_bytes = crossover_mc(out.coefficients.ring_over_tree, ratio);
  out.ring_allgather_mc_bytes = crossover_mc(out.coefficients.ring_over_allgather, ratio);
  out.tree_allgather_mc_bytes = crossover_mc(out.coefficients.tree_over_allgather, ratio);
  if (out.ring_beats_tree)
    out.fastest = out.ring_beats_allgather ? ArtopkCollective::ARTOPK_RING : ArtopkCollective::ALLGATHER;
  else
    out.fastest = out.tree_beats_allgather ? ArtopkCollective::ARTOPK_TREE : ArtopkCollective::ALLGATHER;
  return out;
}

int artopk_root(const std::string& selection, int iteration, int workers, std::uint64_t seed) {
  if (workers <= 1) return 0;
  if (selection == "star") return iteration % workers;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(iteration));
  return static_cast<int>(rng() % static_cast<std::uint64_t>(workers));
}

}  // namespace ddlsim::models
