// Bad input never crashes and never half-writes: one clear line naming the
// JSON path, exit code 2, no output directory.
#include "tests/support/cli.hpp"

#include "models/collective.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

json good() { return ddlsim::test::small_scenario("bad-input"); }

/// Runs `ddlsim run` on `doc` and returns stderr after checking exit code 2 and no output.
std::string run_bad(const std::string& text, const std::string& extra = "") {
  TempDir tmp;
  const std::string file = tmp.write("scenario.json", text);
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} {}", file, tmp.file("out"), extra));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
  // One line; the file name is replaced so messages are stable.
  std::string err = r.err;
  for (auto pos = err.find(file); pos != std::string::npos; pos = err.find(file)) err.replace(pos, file.size(), "FILE");
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  return err;
}

std::string run_bad_doc(const json& doc, const std::string& extra = "") { return run_bad(doc.dump(2), extra); }

}  // namespace

TEST_CASE("malformed JSON reports line and column") {
  CHECK(run_bad("{\n  \"name\": \"x\",\n  \"platform\": {\"workers\": 4,}\n}\n") ==
        "ddlsim: error: FILE: malformed JSON at line 3, column 29: syntax error while parsing object key - unexpected "
        "'}'; expected string literal\n");
}

TEST_CASE("wrong types name the path") {
  json doc = good();
  doc["platform"]["workers"] = "four";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/workers: expected an integer, got the string \"four\"\n");
  doc = good();
  doc["platform"]["link"] = 5;
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/link: expected an object, got the number 5\n");
}

TEST_CASE("negative or zero bandwidth") {
  json doc = good();
  doc["platform"]["link"]["bandwidth"] = "-5Gbps";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/link/bandwidth: bandwidth must be positive, got \"-5Gbps\"\n");
  doc["platform"]["link"]["bandwidth"] = "0Gbps";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/link/bandwidth: bandwidth must be positive, got \"0Gbps\"\n");
  doc["platform"]["link"]["bandwidth"] = 100;
  CHECK(run_bad_doc(doc) ==
        "ddlsim: error: /platform/link/bandwidth: expected a bandwidth string such as \"25Gbps\", got 100\n");
}

TEST_CASE("negative latency") {
  json doc = good();
  doc["platform"]["link"]["latency"] = "-1us";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/link/latency: time must not be negative, got \"-1us\"\n");
}

TEST_CASE("zero workers") {
  json doc = good();
  doc["platform"]["workers"] = 0;
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/workers: expected an integer in [1, 1000000], got 0\n");
}

TEST_CASE("unknown keys are never silently ignored") {
  json doc = good();
  doc["platform"]["lnk"] = {{"bandwidth", "1Gbps"}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/lnk: unknown key \"lnk\"; valid keys are: link, parameter_servers, "
                        "params, routing, topology, workers\n");
  doc = good();
  doc["platfrom"] = json::object();
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platfrom: unknown key \"platfrom\"; valid keys are: description, name, "
                        "network, output, platform, seed, sweep, training, workload\n");
  doc = good();
  doc["training"]["collective"]["params"] = {{"segmnts", 2}};
  CHECK(run_bad_doc(doc).rfind("ddlsim: error: /training/collective/params/segmnts: unknown key \"segmnts\"", 0) == 0);
}

TEST_CASE("unknown names list the valid ones") {
  json doc = good();
  doc["platform"]["topology"] = "mesh";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/topology: unknown topology \"mesh\"; valid names are: custom, "
                        "dragonfly, fat_tree, full, hierarchical, ring, star, torus\n");
  doc = good();
  doc["training"]["sync"]["name"] = "bsb";
  CHECK(run_bad_doc(doc).rfind("ddlsim: error: /training/sync/name: unknown sync model \"bsb\"; valid names are: ", 0) == 0);
  doc = good();
  doc["training"]["collective"]["name"] = "rign";
  CHECK(run_bad_doc(doc) == fmt::format("ddlsim: error: /training/collective/name: unknown collective \"rign\"; valid "
                                    "names are: {}\n",
                                    ddlsim::join_names(ddlsim::models::CollectiveRegistry::instance().names())));
  doc = good();
  doc["network"] = {{"fidelity", "packet"}, {"model", "tcp"}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /network/model: \"tcp\" and \"calibrated\" are flow fidelity's models; at "
                            "packet fidelity ns-3 sends every segment and TCP is set in network.packet (\"tcp\", "
                            "\"segment_bytes\", ...): remove \"model\"\n");
  doc = good();
  doc["network"] = {{"fidelity", "packet"}, {"software", "gloo"}};
  CHECK(run_bad_doc(doc).rfind("ddlsim: error: /network/software/protocol_efficiency: ", 0) == 0);
  doc = good();
  doc["network"] = {{"fidelity", "packet"}, {"packet", {{"tcp", "reno"}}}};
  CHECK(run_bad_doc(doc).rfind("ddlsim: error: /network/packet/tcp: unknown value \"reno\"; valid values are: cubic, "
                               "newreno, linux_reno, bbr,", 0) == 0);
  doc = good();
  doc["network"] = {{"fidelity", "packet"}, {"packet", {{"ecn", true}}}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /network/packet/ecn: ECN needs a queue that marks: set \"queue\": "
                            "\"fq_codel\" (a drop-tail queue only drops)\n");
  doc = good();
  doc["network"] = {{"fidelity", "packet"}, {"packet", {{"segment_bytes", 70000}}}};
  CHECK(run_bad_doc(doc).rfind("ddlsim: error: /network/packet/segment_bytes: ", 0) == 0);
  doc = good();
  doc["network"] = {{"fidelity", "packet"}};
  doc["platform"]["routing"] = "ecmp";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/routing: \"ecmp\": ns-3 routes every packet on its own shortest "
                            "paths (global routing); use \"shortest\", or \"fidelity\": \"flow\" for multipath routing\n");
  doc = good();
  doc["network"] = {{"fidelity", "flow"}, {"packet", {{"tcp", "bbr"}}}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /network/packet: only valid with \"fidelity\": \"packet\", not \"flow\"\n");
  doc = good();
  doc["network"] = {{"fidelity", "exact"}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /network/fidelity: unknown value \"exact\"; valid values are: analytic, flow, "
                        "packet\n");
}

TEST_CASE("missing profile file") {
  json doc = good();
  doc["workload"] = {{"profile", "no/such/profile.json"}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /workload/profile: cannot open profile file \"no/such/profile.json\"\n");
}

TEST_CASE("disconnected custom topology") {
  json doc = good();
  doc["platform"] = json::parse(R"({
    "topology": "custom", "workers": 3,
    "params": {"nodes": [{"name": "a", "kind": "worker"}, {"name": "b", "kind": "worker"},
                         {"name": "c", "kind": "worker"}, {"name": "s", "kind": "switch"}],
               "edges": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}]}})");
  CHECK(run_bad_doc(doc) ==
        "ddlsim: error: /platform/params/edges: topology is disconnected: host \"a\" cannot reach host \"c\"\n");
}

TEST_CASE("--set overrides are validated like the file") {
  CHECK(run_bad_doc(good(), "--set platform.workers=0") ==
        "ddlsim: error: /platform/workers: expected an integer in [1, 1000000], got 0\n");
  CHECK(run_bad_doc(good(), "--set /platform/link/bandwidth=fast") ==
        "ddlsim: error: /platform/link/bandwidth: expected a bandwidth: a number followed by one of bps, Kbps, "
        "Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, got \"fast\"\n");
  CHECK(run_bad_doc(good(), "--set name.x=1") == "ddlsim: error: /name: --set: cannot set \"x\" inside the string \"bad-input\"\n");
}

TEST_CASE("a missing scenario file") {
  auto r = ddlsim::test::ddlsim("run /no/such/scenario.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: cannot open scenario file \"/no/such/scenario.json\"\n");
}

TEST_CASE("--set applies and validate succeeds") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", good().dump());
  auto r = ddlsim::test::ddlsim(fmt::format("validate {} --set platform.workers=6 --set training.collective.name=ring", file));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("valid (6 workers, star topology with 7 nodes and 6 links, bsp + ring)") != std::string::npos);
}

TEST_CASE("list shows every registry") {
  auto r = ddlsim::test::ddlsim("list");
  CHECK(r.exit_code == 0);
  for (const char* name : {"topologies:", "sync models:", "collectives:", "compressors:", "fat_tree", "bsp", "ring",
                           "none"})
    CHECK(r.out.find(name) != std::string::npos);
}

TEST_CASE("engine flags pass through, version prints") {
  auto v = ddlsim::test::ddlsim("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out == std::string("ddlsim ") + DDLSIM_VERSION + "\n");
  auto bad = ddlsim::test::ddlsim("frobnicate");
  CHECK(bad.exit_code == 2);
}

TEST_CASE("platform writes Graphviz and describes the graph") {
  TempDir tmp;
  auto r = ddlsim::test::ddlsim(fmt::format("platform {}/scenarios/fat_tree_k4.json --dot {}", DDLSIM_SOURCE_DIR,
                                            tmp.file("ft.dot")));
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("topology fat_tree: 16 workers, 0 parameter servers, 36 nodes, 48 links, host diameter 6 hops\n",
                    0) == 0);
  const std::string dot = ddlsim::test::slurp(tmp.path() / "ft.dot");
  CHECK(dot.rfind("graph \"fat_tree\" {", 0) == 0);
  CHECK(dot.find("\"worker-15\" [shape=box];") != std::string::npos);
}

TEST_CASE("collective parameters that do not fit the group are refused at load time") {
  json doc = good();
  doc["training"]["collective"] = {{"name", "torus2d"}, {"params", {{"rows", 3}}}};
  CHECK(run_bad_doc(doc) ==
        "ddlsim: error: /training/collective/params: torus2d: rows = 3 does not divide the group size 4\n");
  auto r = ddlsim::test::ddlsim("collectives -n 8 --algorithms torus2d,ring --fidelity analytic");
  CHECK(r.exit_code == 0);
  doc = good();
  doc["training"]["sync"] = {{"name", "asp"}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /platform/parameter_servers: sync model \"asp\" with these params needs at "
                            "least 1 parameter server, got 0\n");
}

TEST_CASE("profile files: malformed JSON and bad fields name the file and the path") {
  TempDir tmp;
  tmp.write("bad.json", "{\"model\": \"m\",\n\"layers\": [}");
  tmp.write("neg.json", R"({"model": "m", "layers": [{"name": "a", "forward_s": "-1ms"}]})");
  json doc = good();
  doc["workload"] = {{"profile", tmp.file("bad.json")}};
  CHECK(run_bad_doc(doc) == fmt::format("ddlsim: error: /workload/profile: {}: malformed JSON at line 2, column 12: "
                                        "syntax error while parsing value - unexpected '}}'; expected '[', '{{', or a "
                                        "literal\n",
                                        tmp.file("bad.json")));
  doc["workload"] = {{"profile", tmp.file("neg.json")}};
  CHECK(run_bad_doc(doc) == fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": "
                                        "/layers/0/forward_s: time must not be negative, got \"-1ms\"\n",
                                        tmp.file("neg.json")));
}

TEST_CASE("compute_scale, framework_overhead_s, unattributed_s and copy_bandwidth: bad values name the path and the range") {
  json doc = good();
  for (const auto& [value, got] : std::vector<std::pair<json, std::string>>{{0, "0"}, {-1.5, "-1.5"}, {2e6, "2000000.0"}}) {
    doc["workload"]["compute_scale"] = value;
    CHECK(run_bad_doc(doc) == fmt::format("ddlsim: error: /workload/compute_scale: expected a number in (0, 1000000] (a "
                                          "multiplier of every compute time of the profile), got {}\n",
                                          got));
  }
  doc["workload"]["compute_scale"] = "2x";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /workload/compute_scale: expected a number, got the string \"2x\"\n");
  doc = good();
  doc["workload"]["framework_overhead_s"] = "-1ms";
  CHECK(run_bad_doc(doc) == "ddlsim: error: /workload/framework_overhead_s: time must not be negative, got \"-1ms\"\n");
  doc = good();
  doc["workload"]["synthetic"]["unattributed_s"] = -0.001;
  CHECK(run_bad_doc(doc) == "ddlsim: error: /workload/synthetic/unattributed_s: time must not be negative, got -0.001\n");
  doc = good();
  doc["training"]["bucketing"] = {{"copy_bandwidth", "0GBps"}};
  CHECK(run_bad_doc(doc) ==
        "ddlsim: error: /training/bucketing/copy_bandwidth: bandwidth must be positive, got \"0GBps\"\n");
  doc["training"] = {{"sync", {{"name", "gossip"}}}, {"bucketing", {{"copy_bandwidth", "100GBps"}}}};
  CHECK(run_bad_doc(doc) == "ddlsim: error: /training/bucketing/copy_bandwidth: sync model \"gossip\" exchanges no "
                            "gradient buckets (it sends models or tensors point to point), so no bucket is copied; "
                            "remove \"copy_bandwidth\"\n");
}
