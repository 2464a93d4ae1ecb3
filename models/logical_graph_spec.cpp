// Logical graphs of decentralised training: reading the spec (read_graph_spec) and checking what
// depends on the worker count (torus2d's grid, custom edges) for build_logical_graph().
#include "models/error.hpp"
#include "models/logical_graph.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace ddlsim::models {
namespace {

constexpr int MAX_RANK = std::numeric_limits<int>::max();

std::vector<std::pair<int, int>> read_edges(const json& value, const std::string& path) {
  if (!value.is_array())
    throw ConfigError(path, fmt::format("expected an array of [a, b] rank pairs, got {}", json_type_name(value)));
  std::vector<std::pair<int, int>> edges;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string at = fmt::format("{}/{}", path, i);
    const json& pair = value[i];
    if (!pair.is_array() || pair.size() != 2)
      throw ConfigError(at, fmt::format("expected a pair [a, b] of worker ranks, got {}", json_type_name(pair)));
    edges.emplace_back(static_cast<int>(checked_integer(pair[0], at + "/0", 0, MAX_RANK)),
                       static_cast<int>(checked_integer(pair[1], at + "/1", 0, MAX_RANK)));
  }
  return edges;
}

}  // namespace

namespace detail {

/// Grid rows r with r >= 2, r | n and n / r >= 2.
std::vector<int> valid_rows(int n) {
  std::vector<int> rows;
  for (int r = 2; r <= n / 2; ++r)
    if (n % r == 0) rows.push_back(r);
  return rows;
}

std::pair<int, int> torus_shape(const GraphSpec& spec, int n) {
  const std::vector<int> valid = valid_rows(n);
  if (valid.empty()) {
    throw ConfigError(pointer_append(spec.path, "graph"),  // n >= 2 without such a grid: 2, 3 or another prime
                      fmt::format("torus2d needs the {} workers as a rows x cols grid with rows >= 2 and cols >= 2, "
                                  "and {} {}; use ring",
                                  n, n, n >= 2 ? "is prime" : "has no such factorisation"));
  }
  if (spec.rows == 0) {  // the most square grid: the largest valid rows <= sqrt(N)
    int rows = valid.front();
    for (int r : valid)
      if (static_cast<std::int64_t>(r) * r <= n) rows = r;
    return {rows, n / rows};
  }
  if (std::find(valid.begin(), valid.end(), spec.rows) == valid.end()) {
    std::vector<std::string> names;
    for (int r : valid) names.push_back(std::to_string(r));
    const std::string why = spec.rows < 2          ? "is below 2"
                            : n % spec.rows != 0   ? fmt::format("does not divide the {} workers", n)
                                                   : "leaves fewer than 2 columns";
    throw ConfigError(pointer_append(spec.path, "rows"),
                      fmt::format("rows {} {}; valid rows for {} workers are: {} (or 0 for the most square grid)",
                                  spec.rows, why, n, join_names(names)));
  }
  return {spec.rows, n / spec.rows};
}

void check_custom_edges(const GraphSpec& spec, int n) {
  const std::string edges_path = pointer_append(spec.path, "edges");
  std::map<std::pair<int, int>, std::size_t> seen;
  for (std::size_t i = 0; i < spec.edges.size(); ++i) {
    const auto [a, b] = spec.edges[i];
    const std::string at = fmt::format("{}/{}", edges_path, i);
    for (int j = 0; j < 2; ++j) {
      const int r = j == 0 ? a : b;
      if (r < 0 || r >= n)
        throw ConfigError(fmt::format("{}/{}", at, j),
                          fmt::format("rank {} is out of range; valid ranks are 0 to {} ({} workers)", r, n - 1, n));
    }
    if (a == b) throw ConfigError(at, fmt::format("self-loop [{}, {}]; an edge joins two different ranks", a, b));
    const auto [it, inserted] = seen.emplace(std::pair<int, int>(std::minmax(a, b)), i);
    if (!inserted)
      throw ConfigError(at, fmt::format("duplicate edge [{}, {}]: the same undirected edge as edges/{}", a, b,
                                        it->second));
  }
}

}  // namespace detail

const std::vector<std::string>& logical_graph_kinds() {
  static const std::vector<std::string> KINDS = {"ring",     "torus2d",         "exponential", "one_peer_exponential",
                                                 "random_matching", "custom"};
  return KINDS;
}

GraphSpec read_graph_spec(ObjectReader& params) {
  GraphSpec spec;
  spec.path = params.path();
  spec.kind = params.choice("graph", logical_graph_kinds(), "ring");
  if (spec.kind == "torus2d") {
    spec.rows = static_cast<int>(params.integer("rows", 0, 0, MAX_RANK));
  } else if (params.has("rows")) {
    throw ConfigError(params.path_of("rows"),
                      fmt::format("\"rows\" applies only to graph \"torus2d\", not \"{}\"", excerpt(spec.kind)));
  }
  spec.distinct_neighbours = params.boolean("distinct_neighbours", false);
  if (spec.kind == "custom") {
    spec.edges = read_edges(params.require("edges"), params.path_of("edges"));
  } else if (params.has("edges")) {
    throw ConfigError(params.path_of("edges"),
                      fmt::format("\"edges\" applies only to graph \"custom\", not \"{}\"", excerpt(spec.kind)));
  }
  return spec;
}

}  // namespace ddlsim::models
