// Refusals that named the wrong thing or came late (docs/reliability.md): `calibrate` checks its
// --out before it fits or prints anything, parameter servers are blamed for their own actors, and
// an output directory no file can go in is blamed on --out (or /output/dir), not on the outputs.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::bad_input;
using ddlsim::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string SCENARIOS = std::string(DDLSIM_SOURCE_DIR) + "/scenarios";

/// A copy of a measurement CSV in `tmp`, as "m.csv".
std::string measurements(const TempDir& tmp) {
  return tmp.write("m.csv", ddlsim::test::slurp(std::string(DDLSIM_SOURCE_DIR) + "/docs/data/lab_collectives.csv"));
}

}  // namespace

TEST_CASE("calibrate refuses an --out that cannot take the snippet before fitting, printing nothing else") {
  TempDir tmp;
  const std::string csv = measurements(tmp);
  const std::string before = ddlsim::test::slurp(csv);
  // A directory: one line, no fit on stdout (bad_input checks both).
  CHECK(bad_input(fmt::format("calibrate {} --out {}", csv, tmp.path().string()), tmp.path().string()) ==
        "ddlsim: error: --out: \"FILE\" is a directory; give the file to write the calibration snippet to\n");
  // The measurements themselves, however named.
  for (const std::string& out : {csv, tmp.path().string() + "/./m.csv"})
    CHECK(bad_input(fmt::format("calibrate {} --out {}", csv, out), out) ==
          "ddlsim: error: --out: \"FILE\" is the measurements file; writing the snippet there would overwrite the "
          "measurements: give another file\n");
  CHECK(ddlsim::test::slurp(csv) == before);
  CHECK(bad_input(fmt::format("calibrate {} --out ''", csv)) ==
        "ddlsim: error: --out: expected a path, got an empty string (without the option: no snippet is written)\n");
  CHECK(bad_input(fmt::format("calibrate {} --out /dev/null", csv)) ==
        "ddlsim: error: --out: \"/dev/null\" is not a regular file\n");
  CHECK(bad_input(fmt::format("calibrate {} --out {}/no/such/dir.json", csv, tmp.path().string()), tmp.path().string()) ==
        "ddlsim: error: --out: \"FILE/no/such/dir.json\" cannot be written: No such file or directory\n");
  // A good --out: the fit, then the file.
  const auto r = ddlsim::test::ddlsim(fmt::format("calibrate {} --out {}", csv, tmp.file("snippet.json")));
  CHECK(r.exit_code == 0);
  CHECK(r.out.ends_with(fmt::format("wrote {}\n", tmp.file("snippet.json"))));
  CHECK(json::parse(ddlsim::test::slurp(tmp.path() / "snippet.json")).contains("fit"));
  for (const auto& e : fs::directory_iterator(tmp.path()))
    CHECK(e.path().filename().string().find("tmp") == std::string::npos);
}

TEST_CASE("an output directory on a file system without storage is blamed on --out or /output/dir") {
  // The directory, and the nearest folder of it that exists.
  for (const auto& [dir, existing] : std::vector<std::pair<std::string, std::string>>{
           {"/proc/ddlsim_x", "/proc"}, {"/proc/ddlsim_x/y", "/proc"}, {"/sys/ddlsim_x", "/sys"}}) {
    CAPTURE(dir);
    const std::string err = bad_input(fmt::format("run {}/default.json --out {}", SCENARIOS, dir));
    CHECK(err.starts_with(fmt::format("ddlsim: error: --out: \"{}\" cannot be created in \"{}\": ", dir, existing)));
    const std::string scenario = bad_input(fmt::format("run {}/default.json --set output.dir={}", SCENARIOS, dir));
    CHECK(scenario.starts_with(fmt::format("ddlsim: error: /output/dir: \"{}\" cannot be created in ", dir)));
  }
  // An existing folder there: its files could not be written either.
  CHECK(bad_input(fmt::format("run {}/default.json --out /proc", SCENARIOS))
            .starts_with("ddlsim: error: --out: \"/proc\" is not writable: "));
}

TEST_CASE("parameter servers whose actors cannot fit are refused at /platform/parameter_servers") {
  long limit = 65530;
  std::ifstream("/proc/sys/vm/max_map_count") >> limit;
  if (limit > 1'000'000) {
    MESSAGE("vm.max_map_count = " << limit << " holds every allowed server count; nothing to refuse here");
    return;
  }
  TempDir tmp;
  const std::string err = bad_input(fmt::format("run {}/vgg16_parameter_server.json --set platform.parameter_servers=1e6 "
                                                "--out {}",
                                                SCENARIOS, tmp.file("out")));
  CHECK(err.starts_with(
      fmt::format("ddlsim: error: /platform/parameter_servers: 1000000 parameter servers need 1000000 SimGrid actors "
                  "(1000032 in all), one stack mapping each, but a process may hold {} memory mappings here "
                  "(vm.max_map_count): at most ",
                  limit)));
  CHECK(err.find(" parameter servers fit beside the 16 workers (32 actors); raise the limit as root with `sysctl -w "
                 "vm.max_map_count=") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
}

TEST_CASE("asynchronous training on servers with identical workers notes the flow model's lockstep") {
  TempDir tmp;
  json doc = json::parse(R"({
    "name": "lockstep", "platform": {"topology": "star", "workers": 4, "parameter_servers": 1,
                                     "link": {"bandwidth": "100Mbps", "latency": "1ms"}},
    "workload": {"synthetic": {"layers": 1, "grad_bytes": 31400}, "iterations": 3},
    "training": {"sync": {"name": "asp"}}, "output": {"timeline": false}})");
  auto err = [&tmp](const json& d) {
    const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} -q", tmp.write("s.json", d.dump()), tmp.file("out")));
    REQUIRE(r.exit_code == 0);
    fs::remove_all(tmp.path() / "out");
    return r.err;
  };
  CHECK(err(doc) ==
        "ddlsim: note: sync model \"asp\": 4 workers of identical compute stay in lockstep at the parameter servers in the "
        "flow model (all push, then all pull); real workers drift apart and overlap one's push with another's pull (the "
        "simulated iteration was 37 % too slow at 4 workers on one server in the lab: docs/validation.md, \"Results: time "
        "to accuracy\"); give training.stragglers a noise (e.g. normal, sigma 0.1) to model the drift\n");
  doc["training"]["sync"] = {{"name", "ssp"}};
  CHECK(err(doc).find("sync model \"ssp\": 4 workers of identical compute") != std::string::npos);
  // Noise or a speed per worker lets them drift; one worker has no one to lock with; bsp waits for all anyway.
  json noisy = doc;
  noisy["training"]["stragglers"] = {{"distribution", "normal"}, {"sigma", 0.1}};
  CHECK(err(noisy).empty());
  json slow = doc;
  slow["training"]["stragglers"] = {{"speed_factors", {1, 1, 1, 2}}};
  CHECK(err(slow).empty());
  json one = doc;
  one["platform"]["workers"] = 1;
  CHECK(err(one).empty());
  json bsp = doc;
  bsp["training"]["sync"] = json::parse(R"({"name": "bsp", "params": {"aggregation": "parameter_server"}})");
  CHECK(err(bsp).empty());
}
