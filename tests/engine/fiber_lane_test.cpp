// The analytic fiber lane (engine/fiber_lane.hpp) against the same scenarios run on SimGrid actors:
// every record of every worker and iteration, the makespan, the traffic, the links and the
// timeline must agree to 1e-9 (relative), for every feature the lane runs; and the scenarios it
// does not run are named with the reason.
#include "engine/fiber_lane.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <string>
#include <tuple>
#include <vector>

using namespace ddlsim;

namespace {

const std::string SCENARIOS = DDLSIM_SOURCE_DIR "/scenarios/";

sim::Scenario load(const std::string& file, std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"network.fidelity=analytic", "output.timeline_workers=3"});
  return sim::load_scenario(SCENARIOS + file, overrides);
}

void check_close(double fiber, double simgrid, const std::string& what) {
  INFO(what << ": fiber " << fiber << ", simgrid " << simgrid);
  CHECK(std::abs(fiber - simgrid) <= 1e-9 * std::max({std::abs(fiber), std::abs(simgrid), 1e-12}));
}

using Event = std::tuple<int, int, double, std::string, std::string, double>;
std::vector<Event> events(const sim::SimulationResult& r) {
  std::vector<Event> out;
  for (const auto& e : r.timeline) out.emplace_back(e.pid, e.tid, e.start_s, e.name, e.category, e.duration_s);
  std::sort(out.begin(), out.end());
  return out;
}

/// Runs `scenario` on both lanes and compares everything they produce.
void check_lanes_agree(const sim::Scenario& scenario) {
  REQUIRE(sim::detail::fiber_lane_exclusion(scenario) == "");
  sim::RunOptions simgrid;
  simgrid.simgrid_analytic = true;
  const auto a = sim::simulate(scenario, {});
  const auto b = sim::simulate(scenario, {}, simgrid);
  check_close(a.makespan_s, b.makespan_s, "makespan");
  REQUIRE(a.workers.size() == b.workers.size());
  for (std::size_t w = 0; w < a.workers.size(); ++w) {
    const auto& x = a.workers[w];
    const auto& y = b.workers[w];
    check_close(x.bytes_sent, y.bytes_sent, "bytes sent");
    CHECK(x.messages_sent == y.messages_sent);
    REQUIRE(x.iterations.size() == y.iterations.size());
    REQUIRE(x.iterations.size() == static_cast<std::size_t>(scenario.workload.iterations));
    for (std::size_t i = 0; i < x.iterations.size(); ++i) {
      const auto& p = x.iterations[i];
      const auto& q = y.iterations[i];
      const std::string at = "worker " + std::to_string(w) + " iteration " + std::to_string(i);
      check_close(p.start_s, q.start_s, at + " start");
      check_close(p.end_s, q.end_s, at + " end");
      check_close(p.compute_s, q.compute_s, at + " compute");
      check_close(p.exposed_comm_s, q.exposed_comm_s, at + " exposed communication");
      check_close(p.comm_busy_s, q.comm_busy_s, at + " communication busy");
      check_close(p.straggler_wait_s, q.straggler_wait_s, at + " straggler wait");
      check_close(p.codec_s, q.codec_s, at + " codec");
    }
  }
  REQUIRE(a.links.size() == b.links.size());
  for (std::size_t l = 0; l < a.links.size(); ++l) {
    CHECK(a.links[l].name == b.links[l].name);
    CHECK(a.links[l].bytes == b.links[l].bytes);
    CHECK(a.links[l].utilization == b.links[l].utilization);
  }
  const auto ea = events(a), eb = events(b);
  REQUIRE(ea.size() == eb.size());
  CHECK(ea.empty() == !scenario.output.timeline);
  for (std::size_t e = 0; e < ea.size(); ++e) {
    CHECK(std::get<3>(ea[e]) == std::get<3>(eb[e]));
    check_close(std::get<2>(ea[e]), std::get<2>(eb[e]), "timeline event start");
    check_close(std::get<5>(ea[e]), std::get<5>(eb[e]), "timeline event duration");
  }
  CHECK(a.iteration_compression.size() == b.iteration_compression.size());
  for (std::size_t i = 0; i < a.iteration_compression.size(); ++i)
    CHECK(a.iteration_compression[i].collective == b.iteration_compression[i].collective);
}

}  // namespace

TEST_CASE("fiber lane: BSP ring with a slow worker and lognormal noise equals SimGrid's analytic run") {
  check_lanes_agree(load("resnet50_bsp_ring_25gbps.json",
                         {"platform.workers=6", "workload.iterations=5",
                          R"(training.stragglers={"slow":[{"rank":3,"factor":1.7}],"distribution":"lognormal","sigma":0.2})"}));
}

TEST_CASE("fiber lane: workers on their own clocks (no timeline: one switch per iteration) equal SimGrid's analytic run") {
  // Untraced iterations sleep on the worker's own clock and meet at the rendezvous in order of
  // arrival time; above, the first three iterations are traced and sleep through the event loop.
  check_lanes_agree(load("resnet50_bsp_ring_25gbps.json",
                                  {"platform.workers=9", "workload.iterations=6", "output.timeline=false",
                                   R"(training.bucketing={"policy":"ddp","bucket_bytes":"25MB","max_inflight":2})",
                                   R"(training.stragglers={"slow":[{"rank":5,"factor":1.4}],"distribution":"normal","sigma":0.1})"}));
}

TEST_CASE("fiber lane: link traces, auto and AR-Topk compression equal SimGrid's analytic run") {
  check_lanes_agree(load("resnet50_artopk_fluctuating_10gbps.json", {"platform.workers=5", "workload.iterations=12"}));
}

TEST_CASE("fiber lane: top-k (an all-gather) with its codec costs and DDP buckets two at a time equal SimGrid's analytic run") {
  check_lanes_agree(load("resnet50_bsp_ring_25gbps.json",
                         {"platform.workers=4", "workload.iterations=4", "training.collective.name=auto", R"(training.compressor={"name":"topk","params":{"ratio":0.01}})",
                          R"(training.compression_cost={"table":"compressor_costs/cpu_this_machine.json"})",
                          R"(training.bucketing={"policy":"ddp","bucket_bytes":"25MB","max_inflight":2})"}));
}

TEST_CASE("fiber lane: Horovod's fusion cycles and the tree all-reduce equal SimGrid's analytic run") {
  check_lanes_agree(load("resnet50_bsp_ring_25gbps.json",
                         {"platform.workers=7", "workload.iterations=3", "training.collective.name=tree",
                          R"(training.bucketing={"policy":"horovod","cycle_time":"2ms"})"}));
}

TEST_CASE("fiber lane: local SGD on a fat tree equals SimGrid's analytic run") {
  check_lanes_agree(load("local_sgd_resnet50.json", {"workload.iterations=9"}));
}

TEST_CASE("fiber lane: Crossbow's model averaging equals SimGrid's analytic run") {
  check_lanes_agree(load("crossbow_mnist_cnn_cpu.json", {"workload.iterations=6"}));
}

TEST_CASE("fiber lane: the scenarios it does not run, and why") {
  CHECK(sim::detail::fiber_lane_exclusion(sim::load_scenario(SCENARIOS + "resnet50_bsp_ring_25gbps.json", {})) ==
        "not analytic fidelity");
  CHECK(sim::detail::fiber_lane_exclusion(load("ssp_one_slow_worker.json", {})) == "parameter servers");
  CHECK(sim::detail::fiber_lane_exclusion(load("gossip_ring_fat_tree.json", {})) ==
        "a logical graph (point-to-point flows)");
  CHECK(sim::detail::fiber_lane_exclusion(load("resnet50_adaptive_fluctuating_10gbps.json", {})) ==
        "adaptive compression");
  CHECK(sim::detail::fiber_lane_exclusion(load("vgg16_parameter_server.json", {})) == "parameter servers");
  CHECK(sim::detail::fiber_lane_exclusion(load("eventgrad_cnn_selsync_4w.json", {})) == "subgroup all-reduces (flows)");
  CHECK(sim::detail::fiber_lane_exclusion(load("eventgrad_cnn_event_adaptive_4w.json", {})) ==
        "a logical graph (point-to-point flows)");
  CHECK(sim::detail::fiber_lane_exclusion(load("resnet50_bsp_ring_25gbps.json",
                                               {"training.collective.name=ps", "platform.parameter_servers=1"})) ==
        "parameter servers");
}

TEST_CASE("fiber lane: a stop request ends the run after the iteration it completes, like SimGrid's") {
  const auto scenario = load("resnet50_bsp_ring_25gbps.json", {"platform.workers=4", "workload.iterations=10"});
  int asked = 0;
  sim::RunOptions options;
  options.stop_requested = [&asked]() { return ++asked == 3; };
  const auto a = sim::simulate(scenario, {}, options);
  asked = 0;
  options.simgrid_analytic = true;
  const auto b = sim::simulate(scenario, {}, options);
  CHECK(a.stopped);
  CHECK(b.stopped);
  REQUIRE(a.workers[0].iterations.size() == 3);
  REQUIRE(b.workers[0].iterations.size() == 3);
  check_close(a.workers[0].iterations[2].end_s, b.workers[0].iterations[2].end_s, "last iteration's end");
}
