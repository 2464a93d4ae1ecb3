// Logical graphs of decentralised training: building the peers (the spec is read and checked in
// logical_graph_spec.cpp).
//
// Definitions and sources: models/logical_graph.hpp. random_matching draws its matchings from
// std::mt19937_64 (whose output sequence the C++ standard fixes) through our own bounded draw
// and Fisher-Yates shuffle, so a (seed, round) gives the same matching with every standard
// library (std::uniform_int_distribution and std::shuffle are implementation-defined).
#include "models/logical_graph.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <random>
#include <stdexcept>

namespace ddlsim::models {
namespace {

/// SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA 2014): a bijective 64-bit mix.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Uniform in [0, bound) by rejection (no modulo bias), from the raw 64-bit outputs only.
std::uint64_t bounded(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound: outputs below it are rejected
  for (;;) {
    const std::uint64_t x = rng();
    if (x >= threshold) return x % bound;
  }
}

int ceil_log2(int n) {
  int k = 0;
  while ((std::int64_t{1} << k) < n) ++k;
  return k;
}

/// The partner of every rank (-1: idle) in a random matching drawn from (seed, round) alone:
/// a Fisher-Yates shuffle, then pairs (0, 1), (2, 3)... of the order; N odd: the last rank idles.
std::vector<int> random_matching(int n, std::uint64_t seed, int round) {
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::mt19937_64 rng(mix64(seed ^ mix64(static_cast<std::uint64_t>(round) + 0x9e3779b97f4a7c15ULL)));
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[bounded(rng, i)]);
  std::vector<int> partners(static_cast<std::size_t>(n), -1);
  for (std::size_t i = 0; i + 1 < order.size(); i += 2) {
    partners[static_cast<std::size_t>(order[i])] = order[i + 1];
    partners[static_cast<std::size_t>(order[i + 1])] = order[i];
  }
  return partners;
}

/// Sorts, removes duplicates and `self`.
std::vector<int> normalised(std::vector<int> peers, int self) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  peers.erase(std::remove(peers.begin(), peers.end(), self), peers.end());
  return peers;
}

}  // namespace

std::vector<int> LogicalGraph::static_out_peers(int r) const {
  const int n = n_;
  auto at = [n](std::int64_t x) { return static_cast<int>(((x % n) + n) % n); };
  if (kind_ == "ring") return {at(r - 1), at(r + 1)};
  if (kind_ == "torus2d") {
    const int row = r / cols_, col = r % cols_, rows = rows_, cols = cols_;
    return {((row + rows - 1) % rows) * cols + col, ((row + 1) % rows) * cols + col,
            row * cols + (col + cols - 1) % cols, row * cols + (col + 1) % cols};
  }
  std::vector<int> out;
  if (kind_ == "exponential")
    for (int k = 0; k < log2n_; ++k) out.push_back(at(r + (std::int64_t{1} << k)));
  return out;  // custom: added from the edge list
}

std::shared_ptr<const LogicalGraph> build_logical_graph(const GraphSpec& spec, int workers, std::uint64_t seed) {
  const auto& kinds = logical_graph_kinds();
  if (std::find(kinds.begin(), kinds.end(), spec.kind) == kinds.end())
    throw ConfigError(pointer_append(spec.path, "graph"),
                      fmt::format("unknown value \"{}\"; valid values are: {}", excerpt(spec.kind), join_names(kinds)));
  if (workers < 1) throw std::invalid_argument("build_logical_graph: workers must be >= 1");
  std::shared_ptr<LogicalGraph> g(new LogicalGraph(spec.kind, workers, seed));
  const int n = workers;
  g->log2n_ = ceil_log2(n);
  if (g->time_varying()) return g;
  if (spec.kind == "torus2d") std::tie(g->rows_, g->cols_) = detail::torus_shape(spec, n);
  if (spec.kind == "custom") detail::check_custom_edges(spec, n);
  g->out_.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) g->out_[static_cast<std::size_t>(r)] = g->static_out_peers(r);
  if (spec.kind == "custom") {
    for (const auto& [a, b] : spec.edges) {
      g->out_[static_cast<std::size_t>(a)].push_back(b);
      g->out_[static_cast<std::size_t>(b)].push_back(a);
    }
  }
  g->in_.resize(static_cast<std::size_t>(n));
  // A ring's left and right (a torus's up and down, left and right) are one message each, even to
  // the same worker, unless the spec asks for distinct neighbours (GraphSpec::distinct_neighbours).
  const bool directions = (spec.kind == "ring" || spec.kind == "torus2d") && !spec.distinct_neighbours;
  for (int r = 0; r < n; ++r) {
    auto& out = g->out_[static_cast<std::size_t>(r)];
    if (directions) {
      out.erase(std::remove(out.begin(), out.end(), r), out.end());
      std::sort(out.begin(), out.end());
    } else {
      out = normalised(std::move(out), r);
    }
    for (int peer : out) g->in_[static_cast<std::size_t>(peer)].push_back(r);  // ascending r: sorted
  }
  return g;
}

bool LogicalGraph::time_varying() const { return kind_ == "one_peer_exponential" || kind_ == "random_matching"; }

int LogicalGraph::period() const { return kind_ == "one_peer_exponential" ? log2n_ : 0; }

void LogicalGraph::check_call(int rank, int round) const {
  if (rank < 0 || rank >= n_ || round < 0)
    throw std::out_of_range(fmt::format("LogicalGraph: rank {} or round {} out of range ({} workers)", rank, round, n_));
}

int LogicalGraph::partner(int rank, int round) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  for (const auto& [cached, partners] : cache_)
    if (cached == round) return partners[static_cast<std::size_t>(rank)];
  std::vector<int> partners = random_matching(n_, seed_, round);
  const int result = partners[static_cast<std::size_t>(rank)];
  if (cache_.size() < MATCHING_CACHE) {
    cache_.emplace_back(round, std::move(partners));
  } else {  // round-robin eviction
    cache_[next_evicted_] = {round, std::move(partners)};
    next_evicted_ = (next_evicted_ + 1) % MATCHING_CACHE;
  }
  return result;
}

std::vector<int> LogicalGraph::out_peers(int rank, int round) const {
  check_call(rank, round);
  if (kind_ == "random_matching") {
    const int p = partner(rank, round);
    return p < 0 ? std::vector<int>{} : std::vector<int>{p};
  }
  if (kind_ == "one_peer_exponential") {
    if (n_ == 1) return {};
    return {static_cast<int>((rank + (std::int64_t{1} << (round % log2n_))) % n_)};
  }
  return out_[static_cast<std::size_t>(rank)];
}

std::vector<int> LogicalGraph::in_peers(int rank, int round) const {
  check_call(rank, round);
  if (kind_ == "one_peer_exponential") {
    if (n_ == 1) return {};
    const std::int64_t offset = std::int64_t{1} << (round % log2n_);
    return {static_cast<int>(((rank - offset) % n_ + n_) % n_)};
  }
  if (kind_ == "random_matching") return out_peers(rank, round);
  return in_[static_cast<std::size_t>(rank)];
}

std::vector<std::pair<int, double>> LogicalGraph::mixing_row(int rank, int round) const {
  std::vector<int> members = in_peers(rank, round);
  members.insert(std::lower_bound(members.begin(), members.end(), rank), rank);
  const double weight = 1.0 / static_cast<double>(members.size());
  std::vector<std::pair<int, double>> row;
  row.reserve(members.size());
  for (int j : members) row.emplace_back(j, weight);
  return row;
}

}  // namespace ddlsim::models
