// gossip: models/sync/gossip.cpp. Decentralised averaging with the logical graph's peers, synchronous or by one-sided puts.
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("gossip synchronous: receive from in-peers and send the model to out-peers, every iteration") {
  TwoLayers w(2);
  auto model = make_sync("gossip", {{"graph", "ring"}});
  auto graph = model->logical_graph(4, 1);
  REQUIRE(graph != nullptr);
  FakeRuntime rt(1, 4, graph);
  model->run_peer_worker(rt, rt, w.plan);
  const auto exchanges = rt.only("i");
  CHECK(exchanges == std::vector<std::string>{"irecv:0", "irecv:2", "isend:0:150:v0", "isend:2:150:v0",  //
                                              "irecv:0", "irecv:2", "isend:0:150:v1", "isend:2:150:v1"});
  CHECK(rt.only("wait:").size() == 8);  // every handle waited within its iteration
  CHECK(rt.in_flight.empty());
  CHECK(rt.only("submit").empty());
  CHECK(model->traits().uses_collective == false);
}

TEST_CASE("gossip asynchronous: one-sided puts, averaging with whatever has arrived, its age recorded") {
  TwoLayers w(3);
  auto model = make_sync("gossip", {{"graph", "ring"}, {"variant", "asynchronous"}});
  FakeRuntime rt(1, 4, model->logical_graph(4, 1));
  rt.arrived[{0, 0}] = Message{0, 0, 150, 0};  // worker 0's model of iteration 0 has arrived; worker 2's never
  model->run_peer_worker(rt, rt, w.plan);
  CHECK(rt.only("put") == std::vector<std::string>{"put:0:150:v0", "put:2:150:v0", "put:0:150:v1", "put:2:150:v1",
                                                   "put:0:150:v2", "put:2:150:v2"});
  CHECK(rt.only("latest").size() == 6);
  // Per iteration t: peer 0 is t - 0 old, peer 2 (nothing yet) t - (-1).
  CHECK(rt.neighbour_staleness == std::vector<std::int64_t>{0, 1, 1, 2, 2, 3});
  // The previous iteration's puts are waited for before new ones; the last ones are left to the runtime.
  CHECK(rt.only("wait:").size() == 4);
  CHECK(rt.in_flight.size() == 2);
}

TEST_CASE("gossip: params are checked with their JSON paths") {
  CHECK_THROWS_WITH_AS(make_sync("gossip", {{"graph", "ring"}, {"variant", "eager"}}),
                       "/training/sync/params/variant: unknown value \"eager\"; valid values are: synchronous, asynchronous",
                       ddlsim::ConfigError);
}
