// Hostile input (docs/reliability.md): numbers beyond a double, absurd magnitudes, deep nesting,
// huge files, duplicate keys, null sections, unusable names and trace periods are each refused
// with one line naming the path, exit code 2 and nothing written -- never a crash or a hang.
#include "tests/support/cli.hpp"

#include "models/json_input.hpp"
#include "models/profile.hpp"
#include "models/units.hpp"
#include "platforms/topology.hpp"
#include "scenario/scenario.hpp"

#include "tests/models/json_text.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::bad_input;
using ddlsim::test::nested;
using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

json good() { return ddlsim::test::small_scenario("hostile"); }

/// `ddlsim run` on the scenario text: bad input, no output directory; stderr with the file as FILE.
std::string run_bad(const TempDir& tmp, const std::string& text, const std::string& extra = "") {
  const std::string file = tmp.write("scenario.json", text);
  const std::string err = bad_input(fmt::format("run {} --out {} {}", file, tmp.file("out"), extra), file);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
  return err;
}

std::string run_bad(const json& doc, const std::string& extra = "") {
  TempDir tmp;
  return run_bad(tmp, doc.dump(), extra);
}

/// good() with `"VALUE"` at /workload/iterations replaced by `raw` (text no JSON value can hold).
std::string with_raw(const std::string& raw) {
  json doc = good();
  doc["workload"]["iterations"] = "VALUE";
  std::string text = doc.dump();
  text.replace(text.find("\"VALUE\""), 7, raw);
  return text;
}

std::string overflow(const std::string& path, const std::string& shown) {
  return fmt::format("ddlsim: error: {}: number out of range: {} does not fit in a double (magnitude at most 1.8e308)\n",
                     path, shown);
}

}  // namespace

TEST_CASE("number overflow: a scenario, a profile, a link trace, a training trace, --set and JSON options") {
  const std::string digits(400, '7');
  const std::string digits_shown = fmt::format("{}... ({} bytes)", digits.substr(0, ddlsim::MAX_ECHO_CHARS), digits.size());
  TempDir tmp;
  CHECK(run_bad(tmp, with_raw("1e999")) == overflow("/workload/iterations", "1e999"));
  CHECK(run_bad(tmp, with_raw(digits)) == overflow("/workload/iterations", digits_shown));
  CHECK(run_bad(tmp, with_raw(fmt::format("-{}", digits))) ==
        overflow("/workload/iterations",
                 fmt::format("-{}... ({} bytes)", digits.substr(0, ddlsim::MAX_ECHO_CHARS - 1), digits.size() + 1)));
  CHECK(run_bad(good(), "--set workload.iterations=1e999") == overflow("/workload/iterations", "1e999"));
  CHECK(run_bad(good(), "--set 'network={\"link_traces\": [{\"bandwidth\": [[0, \"1Gbps\"], [1e400, \"2Gbps\"]]}]}'") ==
        overflow("/network/link_traces/0/bandwidth/1/0", "1e400"));

  const std::string profile = tmp.write("profile.json", R"({"model": "m", "layers": [{"forward_s": 1e999}]})");
  json doc = good();
  doc["workload"] = {{"profile", profile}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": /layers/0/forward_s: "
                                    "number out of range: 1e999 does not fit in a double (magnitude at most 1.8e308)\n",
                                    profile));
  const std::string trace = tmp.write("trace.json", R"({"format": "ddlsim-training-trace", "workers": -1e999})");
  doc = good();
  doc["training"] = {{"sync", {{"name", "event_triggered"}, {"params", {{"decisions", "trace"}, {"trace", trace}}}}}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /training/sync/params/trace: in training trace \"{}\": /workers: "
                                    "number out of range: -1e999 does not fit in a double (magnitude at most 1.8e308)\n",
                                    trace));
  CHECK(bad_input("collectives -n 4 --params '{\"ring\": {\"segments\": 1e999}}'") ==
        "ddlsim: error: --params: /ring/segments: number out of range: 1e999 does not fit in a double (magnitude at "
        "most 1.8e308)\n");
}

TEST_CASE("absurd magnitudes are refused where they are read, with the range") {
  const std::string time_range = ddlsim::units::time_range();
  const std::string latency_range = ddlsim::units::time_range(ddlsim::units::MAX_LATENCY_S);
  CHECK(run_bad(good(), "--set platform.link.bandwidth=1e308Gbps") ==
        "ddlsim: error: /platform/link/bandwidth: bandwidth out of range: expected 1bps to 1000TBps, got \"1e308Gbps\"\n");
  CHECK(run_bad(good(), "--set platform.link.latency=1e308") ==
        fmt::format("ddlsim: error: /platform/link/latency: time out of range: expected {}, got 1e+308\n", latency_range));
  CHECK(run_bad(good(), "--set platform.link.latency=9223372036854775808") ==
        fmt::format("ddlsim: error: /platform/link/latency: time out of range: expected {}, got 9223372036854775808\n",
                    latency_range));
  CHECK(run_bad(good(), "--set workload.synthetic.io_s=1e308s") ==
        fmt::format("ddlsim: error: /workload/synthetic/io_s: time out of range: expected {}, got \"1e308s\"\n", time_range));
  CHECK(run_bad(good(), "--set workload.synthetic.optimizer_s=1e308") ==
        fmt::format("ddlsim: error: /workload/synthetic/optimizer_s: time out of range: expected {}, got 1e+308\n",
                    time_range));
  CHECK(run_bad(good(), "--set 'network.link_traces=[{\"bandwidth\": [[0, \"1e308Gbps\"]]}]'") ==
        "ddlsim: error: /network/link_traces/0/bandwidth/0/1: bandwidth out of range: expected 1bps to 1000TBps, got "
        "\"1e308Gbps\"\n");
  CHECK(run_bad(good(), "--set 'network.link_traces=[{\"latency\": [[0, 1e-320]]}]'") ==
        fmt::format("ddlsim: error: /network/link_traces/0/latency/0/1: time out of range: expected {}, got 1e-320\n",
                    latency_range));
  // A whole model's gradient is a size too: 1e6 layers of 2 GB each exceed 1e15 B.
  CHECK(run_bad(good(), "--set workload.synthetic.layers=1000000 --set workload.synthetic.grad_bytes=2GB") ==
        "ddlsim: error: /workload/synthetic/grad_bytes: the layers' gradients add up to 2e+15 B, above the limit of "
        "1e+15 B\n");
  TempDir tmp;
  const std::string profile = tmp.write("profile.json", R"({"model": "m", "layers": [{"backward_s": 1e308}]})");
  json doc = good();
  doc["workload"] = {{"profile", profile}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": /layers/0/backward_s: "
                                    "time out of range: expected {}, got 1e+308\n",
                                    profile, time_range));
  CHECK(run_bad(good(), "--set 'training.stragglers={\"slow\": [{\"rank\": 1, \"factor\": 1e6}, {\"rank\": 1, "
                        "\"factor\": 10}]}'") ==
        "ddlsim: error: /training/stragglers/slow/1/factor: rank 1's factors multiply to 1e+07, outside [1e-06, 1e+06] "
        "(a compute-time factor's range)\n");
}

TEST_CASE("deep nesting and oversized files are refused, even by validate") {
  TempDir tmp;
  std::string objects, arrays;
  for (std::size_t i = 0; i < ddlsim::MAX_JSON_DEPTH; ++i) objects += "/a", arrays += "/0";
  const std::string message = fmt::format("nested deeper than {} levels of objects and arrays, the limit on a JSON input",
                                          ddlsim::MAX_JSON_DEPTH);
  const std::string deep_objects = tmp.write("objects.json", nested(100'000, R"({"a": )", "}"));
  const std::string deep_arrays = tmp.write("arrays.json", nested(1'000'000, "[", "]"));
  CHECK(bad_input(fmt::format("validate {}", deep_objects)) == fmt::format("ddlsim: error: {}: {}\n", objects, message));
  CHECK(bad_input(fmt::format("validate {}", deep_arrays)) == fmt::format("ddlsim: error: {}: {}\n", arrays, message));
  json doc = good();
  doc["workload"] = {{"profile", deep_arrays}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": {}: {}\n", deep_arrays,
                                    arrays, message));
  const std::string big = tmp.file("big.json");
  std::filesystem::resize_file(tmp.write("big.json", ""), ddlsim::MAX_INPUT_BYTES + 1);  // sparse: no disk used
  CHECK(bad_input(fmt::format("validate {}", big), big) ==
        "ddlsim: error: FILE: larger than 256 MiB, the limit on a JSON input\n");
  CHECK(bad_input(fmt::format("validate {}", tmp.path().string())) ==
        fmt::format("ddlsim: error: scenario file \"{}\" is a directory\n", tmp.path().string()));
}

TEST_CASE("--set: bad JSON-pointer escapes and array indices are bad input") {
  CHECK(run_bad(good(), "--set /platform/li~9nk=1") ==
        "ddlsim: error: --set: \"/platform/li~9nk=1\": a JSON pointer escapes \"~\" as ~0 and \"/\" as ~1; any other "
        "\"~\" is invalid\n");
  CHECK(run_bad(good(), "--set '/platform/link~=1'") ==
        "ddlsim: error: --set: \"/platform/link~=1\": a JSON pointer escapes \"~\" as ~0 and \"/\" as ~1; any other "
        "\"~\" is invalid\n");
  json doc = good();
  doc["network"] = {{"link_traces", json::array({{{"bandwidth", {{0, "1Gbps"}}}}})}};
  CHECK(run_bad(doc, "--set /network/link_traces/99999999999999999999999/period=1") ==
        "ddlsim: error: /network/link_traces: --set: no element \"99999999999999999999999\" in an array of 1 elements\n");
  // A value that is not JSON is taken as a string: its bytes must be UTF-8 (0xFF never is; the
  // assignment "platform.params=" is 16 bytes, so the bad byte is at index 16).
  CHECK(run_bad(good(), "--set \"platform.params=$(printf '\\377')\"") ==
        "ddlsim: error: --set: the assignment is not UTF-8 text: invalid UTF-8 byte at index 16: 0xFF\n");
}

TEST_CASE("null where an object belongs is refused, naming the path, and duplicate keys anywhere") {
  CHECK(run_bad(good(), "--set platform=null") == "ddlsim: error: /platform: expected an object, got null\n");
  CHECK(run_bad(good(), "--set training.sync.params=null") ==
        "ddlsim: error: /training/sync/params: expected an object, got null\n");
  CHECK(run_bad(good(), "--set platform.link=null") == "ddlsim: error: /platform/link: expected an object, got null\n");
  TempDir tmp;
  std::string text = good().dump();
  text.replace(text.find("\"workers\":4"), 11, "\"workers\":4,\"workers\":8");
  CHECK(run_bad(tmp, text) ==
        "ddlsim: error: /platform/workers: duplicate key \"workers\"; a key may appear only once in an object\n");
  CHECK(run_bad(good(), "--set 'platform.link={\"latency\": \"1us\", \"latency\": \"2us\"}'") ==
        "ddlsim: error: /platform/link/latency: duplicate key \"latency\"; a key may appear only once in an object\n");
  const std::string profile =
      tmp.write("profile.json", R"({"model": "m", "layers": [null]})");
  json doc = good();
  doc["workload"] = {{"profile", profile}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": /layers/0: expected an "
                                    "object, got null\n",
                                    profile));
}

TEST_CASE("the name must be fit to name the output directory") {
  const std::string expected = fmt::format(
      "ddlsim: error: /name: expected a name for the output directory: 1 to 230 bytes, no slash, backslash or control "
      "character, not \".\" or \"..\"; got \"{{}}\"\n");
  for (const auto& [name, shown] : std::vector<std::pair<std::string, std::string>>{
           {".", "."}, {"..", ".."}, {"a/b", "a/b"}, {std::string("a\0b", 3), "a\\x00b"}, {"a\nb", "a\\nb"},
           {std::string(231, 'n'), std::string(ddlsim::MAX_ECHO_CHARS, 'n') + "... (231 bytes)"}, {"", ""}}) {
    json doc = good();
    doc["name"] = name;
    CHECK(run_bad(doc) == fmt::format(fmt::runtime(expected), shown));
  }
  json doc = good();
  doc["name"] = std::string(230, 'n');
  TempDir tmp;
  auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("s.json", doc.dump())));
  CHECK(r.exit_code == 0);
}

TEST_CASE("a hierarchical platform's gpus_per_node must divide the workers") {
  json doc = good();
  doc["platform"] = {{"topology", "hierarchical"}, {"workers", 10}, {"params", {{"gpus_per_node", 4}}}};
  CHECK(run_bad(doc) == "ddlsim: error: /platform/params/gpus_per_node: 4 GPUs per node do not divide the 10 workers "
                        "(nodes fill in rank order: the last would hold 2); give a gpus_per_node that divides them\n");
  doc["platform"] = {{"topology", "hierarchical"}, {"workers", 12}};
  CHECK(run_bad(doc) == "ddlsim: error: /platform/params/gpus_per_node: 8 GPUs per node (the default) do not divide "
                        "the 12 workers (nodes fill in rank order: the last would hold 4); give a gpus_per_node that "
                        "divides them\n");
}

TEST_CASE("misspelt keys are named, not reported as missing fields") {
  CHECK(run_bad(good(), "--set 'network.link_traces=[{\"bandwdith\": [[0, \"1Gbps\"]]}]'") ==
        "ddlsim: error: /network/link_traces/0/bandwdith: unknown key \"bandwdith\"; valid keys are: bandwidth, "
        "latency, links, period\n");
  json doc = good();
  doc["workload"] = {{"synthtic", {{"layers", 2}}}};
  CHECK(run_bad(doc) == "ddlsim: error: /workload: missing workload: give \"profile\" (a profile file) or \"synthetic\"; "
                        "found the unknown key \"synthtic\" (misspelt?)\n");
  CHECK(run_bad(good(), "--set 'training.stragglers={\"distribution\": \"normal\", \"sigam\": 0.1}'") ==
        "ddlsim: error: /training/stragglers/sigma: missing: distribution \"normal\" needs its \"sigma\" (a number > 0); "
        "found the unknown key \"sigam\" (misspelt?)\n");
}

TEST_CASE("values echoed in messages are cut: a 10 MB value gives a short line") {
  const std::string huge(10'000'000, 'x');
  const auto cut = [](std::size_t bytes) {
    return fmt::format("{}... ({} bytes)", std::string(ddlsim::MAX_ECHO_CHARS, 'x'), bytes);
  };
  json doc = good();
  doc["platform"]["topology"] = huge;
  CHECK(run_bad(doc).rfind(fmt::format("ddlsim: error: /platform/topology: unknown topology \"{}\"; valid names are: ",
                                       cut(huge.size())),
                           0) == 0);
  doc = good();
  doc["platform"]["link"]["bandwidth"] = huge + "Gbps";
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /platform/link/bandwidth: expected a bandwidth: a number followed "
                                    "by one of bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, "
                                    "GiBps, TiBps, got \"{}\"\n",
                                    cut(huge.size() + 4)));
  doc = good();
  doc["platform"][huge] = 1;
  CHECK(run_bad(doc).size() < 500);
  doc = good();
  doc["network"] = {{"fidelity", huge}};
  CHECK(run_bad(doc).size() < 500);
  doc = good();
  doc["platform"]["workers"] = huge;
  CHECK(run_bad(doc) ==
        fmt::format("ddlsim: error: /platform/workers: expected an integer, got the string \"{}\"\n", cut(huge.size())));
}

TEST_CASE("link-trace periods: longer than the trace, at least the minimum, and runs with them end") {
  const auto with_period = [](const std::string& period) {
    return fmt::format("--set 'network.link_traces=[{{\"bandwidth\": [[0, \"1Gbps\"], [0.5, \"2Gbps\"]], \"period\": "
                       "{}}}]'",
                       period);
  };
  CHECK(run_bad(good(), with_period("0.25")) == "ddlsim: error: /network/link_traces/0/period: the period must be "
                                                "longer than the trace's last time (0.5 s), got 0.25 s\n");
  CHECK(run_bad(good(), with_period("0")) == "ddlsim: error: /network/link_traces/0/period: the period must be longer "
                                             "than the trace's last time (0.5 s), got 0 s\n");
  const auto too_short = [](const std::string& got) {
    return fmt::format("ddlsim: error: /network/link_traces/0/period: a period must be at least {} s (every period "
                       "replays each entry as an engine event), got {} s\n",
                       ddlsim::sim::MIN_TRACE_PERIOD_S, got);
  };
  const std::string single = "--set 'network.link_traces=[{{\"bandwidth\": [[0, \"1Gbps\"]], \"period\": {}}}]'";
  CHECK(run_bad(good(), fmt::format(fmt::runtime(single), "\"1ns\"")) == too_short("1e-09"));
  CHECK(run_bad(good(), fmt::format(fmt::runtime(single), "1e-300")) ==
        fmt::format("ddlsim: error: /network/link_traces/0/period: time out of range: expected {}, got 1e-300\n",
                    ddlsim::units::time_range()));
  CHECK(run_bad(good(), fmt::format(fmt::runtime(single), "\"999us\"")) == too_short("0.000999"));
  // Periods the analytic segments once looped forever on (a rounded cycle landing on its own start).
  TempDir tmp;
  for (const char* period : {"\"1.8ms\"", "\"2.5ms\"", "\"3ms\""}) {
    const std::string file = tmp.write("s.json", good().dump());
    auto r = ddlsim::test::ddlsim(fmt::format(
        "run {} --out {} -q --set 'network.link_traces=[{{\"latency\": [[0, \"1us\"], [0.001, \"2us\"]], \"period\": "
        "{}}}]'",
        file, tmp.file(std::string("out") + period[1]), period));
    CHECK_MESSAGE(r.exit_code == 0, r.err);
  }
}

TEST_CASE("counts have upper bounds, stated in the message") {
  CHECK(run_bad(good(), "--set workload.synthetic.layers=1000001") ==
        fmt::format("ddlsim: error: /workload/synthetic/layers: expected an integer in [1, {}], got 1000001\n",
                    ddlsim::models::MAX_LAYERS));
  TempDir tmp;
  std::string layers = "[";
  for (std::int64_t i = 0; i <= ddlsim::models::MAX_LAYERS; ++i) layers += i == 0 ? "0" : ",0";
  const std::string profile = tmp.write("profile.json", fmt::format(R"({{"model": "m", "layers": {}]}})", layers));
  json doc = good();
  doc["workload"] = {{"profile", profile}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": /layers: expected at "
                                    "most {} layers, got {}\n",
                                    profile, ddlsim::models::MAX_LAYERS, ddlsim::models::MAX_LAYERS + 1));
  CHECK(run_bad(good(), "--set platform.parameter_servers=1000001") ==
        "ddlsim: error: /platform/parameter_servers: expected an integer in [0, 1000000], got 1000001\n");
  CHECK(run_bad(good(), "--set 'training.collective={\"name\": \"tree\", \"params\": {\"segments\": 1048577}}'") ==
        "ddlsim: error: /training/collective/params/segments: expected an integer in [1, 1048576], got 1048577\n");
}

TEST_CASE("a platform's links are bounded before it is built") {
  const std::int64_t limit = ddlsim::platforms::MAX_PLATFORM_LINKS;
  // One host more than the largest full mesh within the limit is refused, naming the count.
  std::int64_t hosts = 2;
  while ((hosts + 1) * hosts / 2 <= limit) ++hosts;  // the largest mesh within the limit
  ++hosts;
  CHECK(run_bad(good(), fmt::format("--set platform.topology=full --set platform.workers={}", hosts)) ==
        fmt::format("ddlsim: error: /platform/workers: a full mesh of {} hosts ({} workers) has {} links, above the "
                    "limit of {} links on a platform\n",
                    hosts, hosts, hosts * (hosts - 1) / 2, limit));
  CHECK(run_bad(good(), "--set platform.topology=full --set platform.workers=3000") ==
        fmt::format("ddlsim: error: /platform/workers: a full mesh of 3000 hosts (3000 workers) has {} links, above the "
                    "limit of {} links on a platform\n",
                    3000 * 2999 / 2, limit));
  // A k=256 fat tree: k^3/4 host ports, but its k^3/2 switch links are there whatever the workers.
  const std::int64_t k = 256;
  CHECK(run_bad(good(), "--set platform.topology=fat_tree --set platform.params.k=256") ==
        fmt::format("ddlsim: error: /platform/params/k: a k=256 fat tree has {} links, above the limit of {} links on a "
                    "platform\n",
                    4 + k * k * k / 2, limit));
  CHECK(run_bad(good(), "--set platform.topology=fat_tree --set platform.params.oversubscription=1e7") ==
        "ddlsim: error: /platform/params/oversubscription: expected a number in [1, 1000000], got 10000000.0\n");
}

TEST_CASE("a sweep section's long keys and values give a short line, not a stack overflow") {
  const std::string key(10'000'000, 'k');
  json doc = good();
  doc["sweep"] = {{"/" + key, {1, 2}}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: {}: \"{}\" is not an override path: use a dotted path "
                                    "(platform.workers) or a JSON pointer (/platform/workers)\n",
                                    ddlsim::excerpt("/sweep/~1" + key, ddlsim::MAX_PATH_CHARS), ddlsim::excerpt("/" + key)));
  doc["sweep"] = {{"platform.workers", {key, key}}};
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /sweep/platform.workers/1: \"{}... ({} bytes)\" is listed twice "
                                    "(also at index 0)\n",
                                    key.substr(0, ddlsim::MAX_ECHO_CHARS), key.size()));
}

TEST_CASE("a pipelined collective of a million segments at analytic fidelity runs, its closed form still linear") {
  // 2^20 segments sum one closed-form term per step: rounding alone moves the whole by ~1e-9 of
  // itself, which the linearity check between its latency and transfer parts must tolerate.
  constexpr double SEGMENTS = 1 << 20;
  constexpr double LINK_LATENCY_S = 1e-6;
  json doc = good();
  doc["network"]["fidelity"] = "analytic";
  doc["training"]["collective"] = {{"name", "tree"}, {"params", {{"segments", static_cast<int>(SEGMENTS)}}}};
  TempDir tmp;
  const std::string file = tmp.write("scenario.json", doc.dump());
  const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} -q", file, tmp.file("out")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json summary = json::parse(ddlsim::test::slurp(tmp.path() / "out" / "summary.json"));
  // Every segment crosses a two-link hop (worker, switch, worker) at least once up the tree and once
  // down it: at least 2 x 2^20 x 2 link latencies.
  CHECK(summary["iteration_time_s"].get<double>() > 2 * SEGMENTS * 2 * LINK_LATENCY_S);
}

TEST_CASE("option errors are one line, exit 2, naming the command and where its options are listed") {
  const auto unknown = ddlsim::test::ddlsim("run scenarios/default.json --no-such-option");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err ==
        "ddlsim: error: ddlsim run: The following argument was not expected: --no-such-option "
        "(`ddlsim run --help` lists the options)\n");
  const auto missing = ddlsim::test::ddlsim("schedule --workers 4 --bytes 1MiB");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err ==
        "ddlsim: error: ddlsim schedule: --algorithm is required (`ddlsim schedule --help` lists the options)\n");
  const auto not_a_number = ddlsim::test::ddlsim("schedule -a ring --workers many --bytes 1MiB");
  CHECK(not_a_number.exit_code == 2);
  CHECK(std::count(not_a_number.err.begin(), not_a_number.err.end(), '\n') == 1);
  CHECK(not_a_number.err.rfind("ddlsim: error: ddlsim schedule: ", 0) == 0);
  const auto bare = ddlsim::test::ddlsim("");
  CHECK(bare.exit_code == 2);
  CHECK(bare.err == "ddlsim: error: ddlsim: A subcommand is required (`ddlsim --help` lists the options)\n");
  const auto list = ddlsim::test::ddlsim("list --bogus");
  CHECK(list.exit_code == 2);
  CHECK(list.err == "ddlsim: error: ddlsim list: The following argument was not expected: --bogus "
                    "(`ddlsim list --help` lists the options)\n");
  // --help is not an error: the usage, exit 0.
  const auto help = ddlsim::test::ddlsim("run --help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--estimate") != std::string::npos);
}

TEST_CASE("command-line quantities that are not UTF-8 are bad input, not an internal error") {
  // Found by fuzz/fuzz_units: the message quoted the value through JSON, which threw on such bytes.
  const auto bandwidth = ddlsim::test::ddlsim("collectives -n 4 --bandwidth \"$(printf '10\\271')\" --latency 1us");
  CHECK(bandwidth.exit_code == 2);
  CHECK(bandwidth.err == "ddlsim: error: --bandwidth: unknown bandwidth unit \"\xb9\" in \"10\xb9\"; expected one of "
                         "bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps\n");
  const auto latency = ddlsim::test::ddlsim("collectives -n 4 --bandwidth 10Gbps --latency \"$(printf '1\\271s')\"");
  CHECK(latency.exit_code == 2);
  CHECK(std::count(latency.err.begin(), latency.err.end(), '\n') == 1);
  CHECK(latency.err.starts_with("ddlsim: error: --latency: unknown time unit "));
}

TEST_CASE("names longer than a file system takes are bad input: output directories and files a scenario names") {
  // Found by fuzz/fuzz_scenario: std::filesystem threw "File name too long" (an internal error).
  TempDir tmp;
  const std::string file = tmp.write("s.json", good().dump());
  const std::string long_name(300, 'a');
  const std::string shown = std::string(ddlsim::MAX_ECHO_CHARS, 'a') + "... (300 bytes)";
  const auto component = ddlsim::test::ddlsim(fmt::format("run {} --out {}/{}/x", file, tmp.path().string(), long_name));
  CHECK(component.exit_code == 2);
  CHECK(component.err.ends_with(" has a name of 300 bytes; a file system takes at most 255\n"));
  CHECK(std::count(component.err.begin(), component.err.end(), '\n') == 1);
  const auto last = ddlsim::test::ddlsim(fmt::format("run {} --out {}/{}", file, tmp.path().string(), std::string(240, 'b')));
  CHECK(last.exit_code == 2);
  CHECK(last.err.ends_with(" ends in a name of 240 bytes; an output directory's name may have at most 230 (room for "
                           "its staging folder beside it)\n"));
  // Nothing was created: only s.json is there.
  CHECK(std::distance(std::filesystem::directory_iterator(tmp.path()), std::filesystem::directory_iterator()) == 1);
  json doc = good();
  doc["workload"] = {{"profile", long_name + ".json"}, {"iterations", 2}};
  // A file's name is shown whole (the message stays within ConfigError's bound): it is what to fix.
  CHECK(run_bad(doc) == fmt::format("ddlsim: error: /workload/profile: cannot open profile file \"{}.json\"\n", long_name));
}

TEST_CASE("surrogate decisions of any run length bind without storing them, or are refused with the bound") {
  // Found by fuzz/fuzz_scenario: event_triggered's surrogate drew and stored a decision per
  // iteration, worker and layer when the scenario loaded: 10^6 iterations of ResNet-50 on 64
  // workers asked for 10 GB before the work estimate could speak. They are drawn when asked now.
  const auto event = ddlsim::test::ddlsim(
      "validate scenarios/resnet50_event_surrogate_64w.json --set workload.iterations=1000000");
  CHECK(event.exit_code == 0);
  CHECK(event.err.empty());
  // ordered_gradients keeps one decision per iteration and worker (it sorts every iteration's
  // workers): bounded at 2^28.
  const auto ordered = ddlsim::test::ddlsim(
      "validate scenarios/eventgrad_cnn_ordered_m2_4w.json --set training.sync.params.decisions=surrogate "
      "--set training.sync.params.m=2 --set workload.iterations=1000000 --set platform.workers=1000");
  CHECK(ordered.exit_code == 2);
  CHECK(ordered.err == "ddlsim: error: /workload/iterations: ordered_gradients keeps a decision per iteration and worker: "
                       "1000000 iterations x 1000 workers = 1e+09, more than the 2.68e+08 (256 MiB) it holds; run fewer "
                       "iterations\n");
}
