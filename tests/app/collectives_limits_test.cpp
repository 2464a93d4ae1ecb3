// `ddlsim collectives` (and `ddlsim schedule`) take the scenario's limits (app/collectives_command.hpp): the worker and
// server ranges, the SimGrid actors a process can hold (counted before anything is built), the
// seed's range, a routing name, hierarchical's gpus_per_node, and the work estimate of `ddlsim run`
// (app/compare_estimate.hpp) with its --estimate, --max-time, --max-memory and --force.
#include "tests/support/cli.hpp"

#include "scenario/work_constants.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::bad_input;
using nlohmann::json;

namespace {

/// The first line of `ddlsim collectives ARGS --estimate`, parsed.
json estimate(const std::string& args) {
  const auto r = ddlsim::test::ddlsim("collectives " + args + " --estimate");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(r.out);
}

long max_map_count() {
  long limit = 65530;
  std::ifstream("/proc/sys/vm/max_map_count") >> limit;
  return limit;
}

}  // namespace

TEST_CASE("collectives refuses the worker and server counts the loader refuses, before building anything") {
  CHECK(bad_input("collectives -n 2000000") == "ddlsim: error: --workers: expected an integer in [1, 1000000], got 2000000\n");
  CHECK(bad_input("collectives -n 0") == "ddlsim: error: --workers: expected an integer in [1, 1000000], got 0\n");
  CHECK(bad_input("collectives -n 4 --servers 1000001 --algorithms ps") ==
        "ddlsim: error: --servers: expected an integer in [0, 1000000], got 1000001\n");
  const long limit = max_map_count();
  if (limit > 1'000'000) {
    MESSAGE("vm.max_map_count = " << limit << " holds every allowed rank count; nothing to refuse here");
    return;
  }
  // One SimGrid actor per rank: refused at once, where SimGrid aborted after 13 s.
  const auto start = std::chrono::steady_clock::now();
  const std::string workers = bad_input("collectives -n 1000000");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(workers.starts_with(fmt::format("ddlsim: error: --workers: 1000000 ranks need 1000000 SimGrid actors, one stack "
                                        "mapping each, but a process may hold {} memory mappings here "
                                        "(vm.max_map_count): at most ",
                                        limit)));
  CHECK(workers.find(" ranks fit (--fidelity analytic needs no actors); raise the limit as root with `sysctl -w "
                     "vm.max_map_count=") != std::string::npos);
  const std::string servers = bad_input("collectives -n 8 --servers 1000000 --algorithms ps");
  CHECK(servers.starts_with("ddlsim: error: --servers: 1000000 parameter servers need 1000000 SimGrid actors (1000008 "
                            "in all), one stack mapping each"));
  CHECK(servers.find(" parameter servers fit beside the 8 ranks (8 actors) (--fidelity analytic needs no actors)") !=
        std::string::npos);
}

TEST_CASE("collectives refuses a negative seed, an empty routing and a gpus_per_node that does not divide N") {
  CHECK(bad_input("collectives -n 4 --seed -1") ==
        "ddlsim: error: --seed: expected an integer in [0, 9223372036854775807], got -1\n");
  CHECK(bad_input("collectives -n 4 --routing ''") ==
        "ddlsim: error: --routing: unknown value \"\"; valid values are: shortest, ecmp, dmodk\n");
  CHECK(bad_input("collectives -n 10 -t hierarchical --topology-params '{\"gpus_per_node\": 4}'") ==
        "ddlsim: error: --topology-params: 4 GPUs per node do not divide the 10 workers (nodes fill in rank order: the "
        "last would hold 2); give a gpus_per_node that divides them\n");
  CHECK(bad_input("collectives -n 10 -t hierarchical") ==
        "ddlsim: error: --topology-params: 8 GPUs per node (the default) do not divide the 10 workers (nodes fill in "
        "rank order: the last would hold 2); give a gpus_per_node that divides them\n");
  const auto ok = ddlsim::test::collectives_csv("-n 8 -t hierarchical --topology-params '{\"gpus_per_node\": 4}' "
                                                "--algorithms hierarchical --seed 0");
  CHECK(ok.count("hierarchical") == 1);
}

TEST_CASE("the collectives estimate counts every rank's flows and the step's NIC sharing") {
  namespace w = ddlsim::sim::work;
  constexpr int N = 8;
  // Ring: 2(N-1) steps of one send per rank; direct: two steps of N-1 sends per rank.
  const json e = estimate(fmt::format("-n {} --algorithms ring,direct", N));
  CHECK(e["unit"] == "collective call");
  CHECK(e["iterations"] == 2);
  const double ring_flows = N * 2.0 * (N - 1), direct_flows = N * 2.0 * (N - 1);
  CHECK(e["flows"].get<double>() == doctest::Approx(ring_flows + direct_flows));
  for (const auto& t : e["terms"]) {
    if (t["what"] == "flows of \"ring\"")
      CHECK(t["wall_s"].get<double>() == doctest::Approx(ring_flows * (w::FLOW_S + w::STEP_SHARED_FLOW_S)));
    if (t["what"] == "flows of \"direct\"")
      CHECK(t["wall_s"].get<double>() ==
            doctest::Approx(direct_flows * w::FLOW_S + N * 2.0 * (N - 1) * (N - 1) * w::STEP_SHARED_FLOW_S));
  }
  CHECK(e["refused"].is_null());
  // At analytic fidelity nothing is simulated: no flows.
  CHECK(estimate(fmt::format("-n {} --fidelity analytic", N))["flows"] == 0);
}

TEST_CASE("collectives refuses a comparison estimated above the limits, naming the option that makes it big") {
  // A tree of 2^20 segments: 2 min (42 s measured), --params names it.
  const std::string tree = "-n 8 --algorithms tree --params '{\"tree\": {\"segments\": 1048576}}'";
  const std::string slow = bad_input("collectives " + tree + " --max-time 60s");
  CHECK(slow.starts_with("ddlsim: error: --params/tree: this comparison is estimated at "));
  CHECK(slow.find(" of wall time, above the --max-time limit of 60 s (most of it for the flows of \"tree\"; ") !=
        std::string::npos);
  CHECK(slow.ends_with("make the comparison smaller, or pass --force to run it anyway (docs/reliability.md)\n"));
  CHECK(slow.find("of output") == std::string::npos);
  const std::string big = bad_input("collectives " + tree + " --max-memory 500MB");
  CHECK(big.starts_with("ddlsim: error: --params/tree: this comparison is estimated at "));
  CHECK(big.find(" of memory, more than the --max-memory limit of 500 MB (most of it for the flows of \"tree\"; ") !=
        std::string::npos);
  // 4,096 ranks of a direct all-reduce: every rank's 4,095 flows in flight at once.
  const std::string wide = bad_input("collectives -n 4096 --bytes 64MiB --max-memory 16GB");
  CHECK(wide.starts_with("ddlsim: error: --workers: this comparison is estimated at "));
  CHECK(wide.find("of memory, more than the --max-memory limit of 16 GB (most of it for the flows of ") != std::string::npos);
  // --force runs past the limit.
  const auto forced = ddlsim::test::ddlsim("collectives -n 4 --algorithms ring --max-time 1ns --force --csv");
  CHECK(forced.exit_code == 0);
  CHECK(bad_input("collectives -n 4 --algorithms ring --max-time 1ns").find("above the --max-time limit of") !=
        std::string::npos);
}

TEST_CASE("schedule takes the same ranges and work estimate: a document past the memory is refused, not killed") {
  CHECK(bad_input("schedule -a ring -n 2000000 -m 1MiB") ==
        "ddlsim: error: --workers: expected an integer in [1, 1000000], got 2000000\n");
  CHECK(bad_input("schedule -a ps -n 4 --servers 1000001 -m 1MiB") ==
        "ddlsim: error: --servers: expected an integer in [0, 1000000], got 1000001\n");
  // A ring of 100,000 ranks: 4e10 operations (it was killed for memory after 85 s).
  const std::string huge = bad_input("schedule -a ring -n 100000 -m 1MiB");
  CHECK(huge.starts_with("ddlsim: error: --workers: this schedule is estimated at "));
  CHECK(huge.find("(most of it for the operations of every rank; 4e+10 engine events over 1 collective call, ") !=
        std::string::npos);
  const std::string segments = bad_input("schedule -a ring -n 8 -m 1MiB --params '{\"segments\": 1000}' --max-time 1ms");
  CHECK(segments.starts_with("ddlsim: error: --params: this schedule is estimated at "));
  // Every send has its receive: twice the sends of a ring all-reduce, 2(N-1) per rank.
  const auto r = ddlsim::test::ddlsim("schedule -a ring -n 8 -m 1MiB --estimate");
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["events"].get<double>() == doctest::Approx(2 * 8 * 2 * 7));
  CHECK(ddlsim::test::ddlsim("schedule -a ring -n 8 -m 1MiB --max-time 1ns --force").exit_code == 0);
}
