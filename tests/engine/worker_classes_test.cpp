// Classes of identical workers on the fiber lane (engine/worker_classes.hpp): a run that simulates one
// worker per class must give every worker exactly what simulating each one gives -- every record,
// the traffic, the makespan, the links, the timeline, and iterations.csv and timeline.json byte
// for byte -- for every sync model, collective shape and compressor the lane runs.
#include "analysis/output_dir.hpp"
#include "analysis/run_outputs.hpp"
#include "engine/fiber_lane.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"
#include "engine/worker_classes.hpp"

#include <doctest/doctest.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ddlsim;

namespace {

const std::string SCENARIOS = DDLSIM_SOURCE_DIR "/scenarios/";

sim::Scenario load(const std::string& file, std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"network.fidelity=analytic", "output.timeline_workers=3"});
  return sim::load_scenario(SCENARIOS + file, overrides);
}

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs `scenario` into `dir` through the CLI's sink; returns iterations.csv and timeline.json.
std::pair<std::string, std::string> files(const sim::Scenario& scenario, bool every_worker, const std::string& dir) {
  std::filesystem::remove_all(dir);
  analysis::OutputDir out(dir, "--out");
  analysis::RunOutputs outputs(scenario, out);
  sim::RunOptions options;
  options.every_worker = every_worker;
  options.sink = &outputs;
  const auto result = sim::simulate(scenario, {}, options);
  outputs.finish(result, nlohmann::json::object());
  auto got = std::make_pair(read(dir + "/iterations.csv"), read(dir + "/timeline.json"));
  std::filesystem::remove_all(dir);
  return got;
}

/// `scenario` simulated once per class and worker by worker: everything equal, exactly.
void check_classes_agree(const sim::Scenario& scenario, int expect_simulated) {
  const auto classes = sim::detail::worker_classes(scenario);
  REQUIRE(classes != nullptr);
  CHECK(static_cast<int>(classes->simulated().size()) == expect_simulated);
  sim::RunOptions every;
  every.every_worker = true;
  const auto a = sim::simulate(scenario, {});
  const auto b = sim::simulate(scenario, {}, every);
  CHECK(a.notes.size() == b.notes.size() + 1);  // the note saying how many workers were simulated
  CHECK(a.makespan_s == b.makespan_s);
  REQUIRE(a.workers.size() == b.workers.size());
  REQUIRE(a.workers.size() == static_cast<std::size_t>(scenario.platform.workers));
  for (std::size_t w = 0; w < a.workers.size(); ++w) {
    const auto& x = a.workers[w];
    const auto& y = b.workers[w];
    INFO("worker " << w);
    CHECK(x.bytes_sent == y.bytes_sent);
    CHECK(x.messages_sent == y.messages_sent);
    REQUIRE(x.iterations.size() == y.iterations.size());
    REQUIRE(x.iterations.size() == static_cast<std::size_t>(scenario.workload.iterations));
    for (std::size_t i = 0; i < x.iterations.size(); ++i) {
      const auto& p = x.iterations[i];
      const auto& q = y.iterations[i];
      INFO("iteration " << i);
      CHECK(p.start_s == q.start_s);
      CHECK(p.end_s == q.end_s);
      CHECK(p.compute_s == q.compute_s);
      CHECK(p.exposed_comm_s == q.exposed_comm_s);
      CHECK(p.comm_busy_s == q.comm_busy_s);
      CHECK(p.straggler_wait_s == q.straggler_wait_s);
      CHECK(p.codec_s == q.codec_s);
      CHECK(p.arrivals == q.arrivals);
    }
  }
  REQUIRE(a.totals.workers.size() == b.totals.workers.size());
  for (std::size_t w = 0; w < a.totals.workers.size(); ++w) {
    CHECK(a.totals.workers[w].duration_s == b.totals.workers[w].duration_s);
    CHECK(a.totals.workers[w].straggler_wait_s == b.totals.workers[w].straggler_wait_s);
  }
  for (const double q : {0.0, 0.5, 0.9, 1.0}) CHECK(a.totals.durations.quantile(q) == b.totals.durations.quantile(q));
  REQUIRE(a.links.size() == b.links.size());
  for (std::size_t l = 0; l < a.links.size(); ++l) CHECK(a.links[l].name == b.links[l].name);
  REQUIRE(a.timeline.size() == b.timeline.size());
  CHECK(a.timeline.empty() == !scenario.output.timeline);
  for (std::size_t e = 0; e < a.timeline.size(); ++e) {  // in the same order
    CHECK(a.timeline[e].pid == b.timeline[e].pid);
    CHECK(a.timeline[e].name == b.timeline[e].name);
    CHECK(a.timeline[e].start_s == b.timeline[e].start_s);
    CHECK(a.timeline[e].duration_s == b.timeline[e].duration_s);
  }
  REQUIRE(a.iteration_compression.size() == b.iteration_compression.size());
  for (std::size_t i = 0; i < a.iteration_compression.size(); ++i)
    CHECK(a.iteration_compression[i].collective == b.iteration_compression[i].collective);
  // One folder per process: ctest runs this file's cases in parallel processes.
  const auto dir = std::filesystem::temp_directory_path() / ("ddlsim_worker_classes_test_" + std::to_string(::getpid()));
  const auto by_class = files(scenario, false, dir.string() + "/classes");
  const auto one_by_one = files(scenario, true, dir.string() + "/every");
  CHECK(by_class.first.size() > 100);
  CHECK(by_class.first == one_by_one.first);
  CHECK(by_class.second == one_by_one.second);
}

}  // namespace

TEST_CASE("worker classes: ranks, slots and the workers each simulated one stands for") {
  const sim::detail::WorkerClasses classes(6, {1.0, 1.0, 2.0, 1.0, 2.0, 3.0}, 2);
  CHECK(classes.simulated() == std::vector<int>{0, 1, 2, 5});  // 0 and 1 shown, 2 and 5 the first of their speed
  CHECK(classes.slot_of() == std::vector<int>{0, 1, 2, 0, 2, 3});
  CHECK(classes.slot(5) == 3);
  CHECK_THROWS_WITH((void)classes.slot(3), "worker 3 is not simulated");
  const sim::detail::WorkerClasses equal(5, {}, 0);
  CHECK(equal.simulated() == std::vector<int>{0});
  CHECK(equal.slot_of() == std::vector<int>{0, 0, 0, 0, 0});
}

TEST_CASE("worker classes: BSP ring, one class, equals every worker simulated") {
  check_classes_agree(load("resnet50_bsp_ring_25gbps.json", {"platform.workers=12", "workload.iterations=4"}), 3);
}

TEST_CASE("worker classes: slow workers form their own classes, their waits and everyone's equal every worker simulated") {
  check_classes_agree(load("resnet50_bsp_ring_25gbps.json",
                           {"platform.workers=11", "workload.iterations=5",
                            R"(training.stragglers={"slow":[{"rank":4,"factor":1.7},{"rank":9,"factor":1.7},{"rank":7,"factor":1.2}]})"}),
                      5);  // ranks 0-2 shown, 4 (and 9) at 1.7, 7 at 1.2
}

TEST_CASE("worker classes: a tree (traffic differs by rank) with Horovod's cycles equals every worker simulated") {
  check_classes_agree(load("resnet50_bsp_ring_25gbps.json",
                           {"platform.workers=9", "workload.iterations=3", "training.collective.name=tree",
                            R"(training.bucketing={"policy":"horovod","cycle_time":"2ms"})"}),
                      3);
}

TEST_CASE("worker classes: AR-Topk's rotating roots under link traces and auto equal every worker simulated") {
  check_classes_agree(load("resnet50_artopk_fluctuating_10gbps.json", {"platform.workers=7", "workload.iterations=12"}), 3);
}

TEST_CASE("worker classes: AR-Topk's roots over 70 workers (every worker its own traffic) equal every worker simulated") {
  check_classes_agree(load("resnet50_artopk_fluctuating_10gbps.json",
                           {"platform.workers=70", "workload.iterations=80", "output.timeline=false"}),
                      1);
}

TEST_CASE("worker classes: top-k's all-gather with codec costs and two buckets in flight equals every worker simulated") {
  check_classes_agree(load("resnet50_bsp_ring_25gbps.json",
                           {"platform.workers=6", "workload.iterations=4", "training.collective.name=auto",
                            R"(training.compressor={"name":"topk","params":{"ratio":0.01}})",
                            R"(training.compression_cost={"table":"compressor_costs/cpu_this_machine.json"})",
                            R"(training.bucketing={"policy":"ddp","bucket_bytes":"25MB","max_inflight":2})"}),
                      3);
}

TEST_CASE("worker classes: local SGD on a fat tree and Crossbow equal every worker simulated") {
  check_classes_agree(load("local_sgd_resnet50.json", {"workload.iterations=9"}), 3);
  check_classes_agree(load("crossbow_mnist_cnn_cpu.json", {"workload.iterations=6", "output.timeline=false"}), 1);
}

TEST_CASE("worker classes: the runs that simulate every worker, and why") {
  const auto noisy = load("resnet50_bsp_ring_25gbps.json",
                          {"platform.workers=8", R"(training.stragglers={"distribution":"lognormal","sigma":0.2})"});
  CHECK(sim::detail::replication_exclusion(noisy) == "compute-time noise");
  CHECK(sim::detail::worker_classes(noisy) == nullptr);
  CHECK(sim::detail::replication_exclusion(sim::load_scenario(SCENARIOS + "resnet50_bsp_ring_25gbps.json", {})) ==
        "not analytic fidelity");
  CHECK(sim::detail::replication_exclusion(load("ssp_one_slow_worker.json", {})) == "parameter servers");
  // Replicable, but every worker is its own class or shown: nothing to gain.
  CHECK(sim::detail::replication_exclusion(load("resnet50_bsp_ring_25gbps.json", {"platform.workers=3"})) == "");
  CHECK(sim::detail::worker_classes(load("resnet50_bsp_ring_25gbps.json", {"platform.workers=3"})) == nullptr);
  CHECK(sim::detail::worker_classes(
            load("resnet50_bsp_ring_25gbps.json", {"platform.workers=3", "output.timeline=false",
                                                   R"(training.stragglers={"speed_factors":[1,2,3]})"})) == nullptr);
}
