// Reading a logical graph's spec and checking what depends on the worker count
// (models/logical_graph_spec.cpp): read_graph_spec, torus2d's grid (detail::torus_shape) and the
// custom edges (detail::check_custom_edges), with their exact messages at the JSON path.
#include "models/error.hpp"
#include "models/logical_graph.hpp"

#include <doctest/doctest.h>
#include <string>
#include <utility>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

const std::string PARAMS = "/training/sync/params";

GraphSpec read(const json& params) {
  ObjectReader reader(params, PARAMS);
  return read_graph_spec(reader);
}

GraphSpec torus(int rows) {
  GraphSpec spec;
  spec.kind = "torus2d";
  spec.rows = rows;
  spec.path = PARAMS;
  return spec;
}

GraphSpec edges(std::vector<std::pair<int, int>> list) {
  GraphSpec spec;
  spec.kind = "custom";
  spec.edges = std::move(list);
  spec.path = "/p";
  return spec;
}

}  // namespace

TEST_CASE("logical graph: read_graph_spec reads and refuses") {
  const GraphSpec ring = read(json::object());
  CHECK(ring.kind == "ring");
  CHECK(ring.path == PARAMS);
  const GraphSpec torus = read(json{{"graph", "torus2d"}, {"rows", 4}});
  CHECK(torus.kind == "torus2d");
  CHECK(torus.rows == 4);
  CHECK(read(json{{"graph", "torus2d"}}).rows == 0);
  const GraphSpec c = read(json::parse(R"({"graph": "custom", "edges": [[0, 1], [2, 1]]})"));
  CHECK(c.edges == std::vector<std::pair<int, int>>{{0, 1}, {2, 1}});
  // read_graph_spec leaves unknown keys to the caller's finish().
  CHECK(read(json{{"graph", "exponential"}, {"other", 1}}).kind == "exponential");

  CHECK_THROWS_WITH_AS(read(json{{"graph", "mesh"}}),
                       "/training/sync/params/graph: unknown value \"mesh\"; valid values are: ring, torus2d, "
                       "exponential, one_peer_exponential, random_matching, custom",
                       ConfigError);
  CHECK_THROWS_WITH_AS(read(json{{"graph", "ring"}, {"rows", 2}}),
                       "/training/sync/params/rows: \"rows\" applies only to graph \"torus2d\", not \"ring\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(read(json::parse(R"({"edges": [[0, 1]]})")),
                       "/training/sync/params/edges: \"edges\" applies only to graph \"custom\", not \"ring\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(read(json{{"graph", "custom"}}), "/training/sync/params/edges: missing required key",
                       ConfigError);
  CHECK_THROWS_WITH_AS(read(json{{"graph", "custom"}, {"edges", "0-1"}}),
                       "/training/sync/params/edges: expected an array of [a, b] rank pairs, got the string \"0-1\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(read(json::parse(R"({"graph": "custom", "edges": [[0, 1], [1, 2, 3]]})")),
                       "/training/sync/params/edges/1: expected a pair [a, b] of worker ranks, got an array",
                       ConfigError);
  CHECK_THROWS_WITH_AS(read(json::parse(R"({"graph": "custom", "edges": [[0, 1], [1, 2], [2, 3], [3, "x"]]})")),
                       "/training/sync/params/edges/3/1: expected an integer, got the string \"x\"", ConfigError);
  CHECK_THROWS_WITH_AS(read(json::parse(R"({"graph": "custom", "edges": [[-1, 1]]})")),
                       "/training/sync/params/edges/0/0: expected an integer in [0, 2147483647], got -1", ConfigError);
  CHECK_THROWS_WITH_AS(read(json{{"graph", "torus2d"}, {"rows", -2}}),
                       "/training/sync/params/rows: expected an integer in [0, 2147483647], got -2", ConfigError);
}

TEST_CASE("logical graph spec: the kinds in order, distinct_neighbours, and what read_graph_spec leaves to others") {
  CHECK(logical_graph_kinds() ==
        std::vector<std::string>{"ring", "torus2d", "exponential", "one_peer_exponential", "random_matching", "custom"});
  CHECK_FALSE(read(json::object()).distinct_neighbours);
  CHECK(read(json{{"distinct_neighbours", true}}).distinct_neighbours);
  CHECK_THROWS_WITH_AS(read(json{{"distinct_neighbours", 1}}),
                       "/training/sync/params/distinct_neighbours: expected true or false, got the number 1", ConfigError);
  // rows 0 and a custom graph's out-of-range ranks are read as given: they depend on the worker count.
  CHECK(read(json{{"graph", "torus2d"}, {"rows", 7}}).rows == 7);
  CHECK(read(json::parse(R"({"graph": "custom", "edges": [[0, 99], [3, 3]]})")).edges ==
        std::vector<std::pair<int, int>>{{0, 99}, {3, 3}});
}

TEST_CASE("logical graph spec: torus2d's grid is the most square rows x cols with rows <= cols, or the rows given") {
  // The largest divisor r >= 2 of N with r * r <= N and N / r >= 2.
  const std::vector<std::pair<int, std::pair<int, int>>> square{
      {4, {2, 2}}, {6, {2, 3}}, {12, {3, 4}}, {16, {4, 4}}, {18, {3, 6}}, {36, {6, 6}}, {98, {7, 14}}};
  for (const auto& [n, shape] : square) {
    CAPTURE(n);
    CHECK(detail::torus_shape(torus(0), n) == shape);
  }
  CHECK(detail::torus_shape(torus(4), 12) == std::pair<int, int>{4, 3});  // rows may exceed cols when given
  CHECK(detail::torus_shape(torus(6), 12) == std::pair<int, int>{6, 2});
  CHECK_THROWS_WITH_AS(detail::torus_shape(torus(0), 2),
                       "/training/sync/params/graph: torus2d needs the 2 workers as a rows x cols grid with rows >= 2 "
                       "and cols >= 2, and 2 is prime; use ring",
                       ConfigError);
  CHECK_THROWS_WITH_AS(detail::torus_shape(torus(5), 12),
                       "/training/sync/params/rows: rows 5 does not divide the 12 workers; valid rows for 12 workers "
                       "are: 2, 3, 4, 6 (or 0 for the most square grid)",
                       ConfigError);
}

TEST_CASE("logical graph spec: custom edges in range, without self-loops or duplicates in either direction") {
  CHECK_NOTHROW(detail::check_custom_edges(edges({{0, 1}, {1, 2}, {2, 0}}), 3));
  CHECK_NOTHROW(detail::check_custom_edges(edges({}), 1));
  CHECK_THROWS_WITH_AS(detail::check_custom_edges(edges({{0, 1}, {1, 3}}), 3),
                       "/p/edges/1/1: rank 3 is out of range; valid ranks are 0 to 2 (3 workers)", ConfigError);
  CHECK_THROWS_WITH_AS(detail::check_custom_edges(edges({{0, 1}, {2, 2}}), 3),
                       "/p/edges/1: self-loop [2, 2]; an edge joins two different ranks", ConfigError);
  CHECK_THROWS_WITH_AS(detail::check_custom_edges(edges({{2, 0}, {1, 2}, {0, 2}}), 3),
                       "/p/edges/2: duplicate edge [0, 2]: the same undirected edge as edges/0", ConfigError);
}
