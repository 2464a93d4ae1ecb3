// Smaller promises of the command line: `ddlsim list` names everything a scenario can name, every
// suggestion a bundled scenario's description makes runs, the documented routing table comes from
// the documented command, crossbow's advice on a synthetic workload works, and `run --every-worker`
// gives the outputs of the classes of identical workers.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <regex>

using ddlsim::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string SOURCE = DDLSIM_SOURCE_DIR;

/// The `--set ARG` runs of a description: consecutive ones together, a run ending at a token
/// followed by punctuation (", --set B" starts another); ARG is a word or a '...' quoted one.
std::vector<std::string> suggestions(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  const std::regex token(R"('[^']*'\S*|\S+)");
  std::vector<std::string> tokens;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), token); it != std::sregex_iterator(); ++it)
    tokens.push_back(it->str());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] != "--set" || i + 1 == tokens.size()) {
      if (!current.empty()) out.push_back(current);
      current.clear();
      continue;
    }
    std::string arg = tokens[++i];
    const bool last = arg.find_last_of(".,;)") == arg.size() - 1;
    while (!arg.empty() && std::string(".,;)").find(arg.back()) != std::string::npos) arg.pop_back();
    current += (current.empty() ? "--set " : " --set ") + arg;
    if (last) {
      out.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

}  // namespace

TEST_CASE("list names every registry and choice a scenario can give, with its JSON path") {
  const auto r = ddlsim::test::ddlsim("list");
  REQUIRE(r.exit_code == 0);
  for (const char* line : {"topologies: (platform.topology)", "sync models: (training.sync.name)",
                           "collectives: (training.collective.name)", "compressors: (training.compressor.name)",
                           "software presets: (network.software", "bucketing policies: (training.bucketing.policy)",
                           "logical graphs: (training.sync.params.graph", "routings: (platform.routing",
                           "network models: (network.model)", "fidelities: (network.fidelity)",
                           "collective granularities: (network.collective_granularity)",
                           "straggler noise: (training.stragglers.distribution)"})
    CHECK_MESSAGE(r.out.find(line) != std::string::npos, line);
  for (const char* preset : {"ideal", "gloo", "mpi", "nccl_simple", "nccl_ll", "nccl_ll128", "nccl"})
    CHECK(r.out.find(fmt::format("\n  {:<22} ", preset)) != std::string::npos);
  CHECK(r.out.find("\n  gloo                   overhead 15 us send, 15 us receive per step; protocol efficiency 0.9415; "
                   "handshake per 1.049 MB segment, 2 in flight; call cost 50 us\n") != std::string::npos);
  CHECK(r.out.find("\n  nccl_simple            overhead 6.6 us send, 0 s receive per step; 8 credits of 524.3 KB posted up "
                   "front, no handshake; call cost 8.4 us\n") != std::string::npos);
  for (const char* name : {"mgwfbp", "horovod", "torus2d", "random_matching", "dmodk", "calibrated", "pipelined", "lognormal"})
    CHECK_MESSAGE(r.out.find(fmt::format("\n  {} ", name)) != std::string::npos, name);
  // Every line names something and says what it is.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(line.back() != ' ', line);
}

TEST_CASE("every --set a bundled scenario's description suggests runs as written") {
  TempDir tmp;
  int tried = 0;
  for (const auto& entry : fs::directory_iterator(SOURCE + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const auto doc = json::parse(ddlsim::test::slurp(entry.path()));
    for (const auto& s : suggestions(doc.value("description", ""))) {
      // Placeholders (platform.workers=N, bandwidth=XGbps) are for the reader to fill in.
      if (std::regex_search(s, std::regex(R"(=[A-Z]+[a-z]*(\s|$))"))) continue;
      CAPTURE(entry.path().filename().string());
      CAPTURE(s);
      ++tried;
      const auto r = ddlsim::test::ddlsim(fmt::format("run {} {} --set workload.iterations=2 --quiet --out {}",
                                                      entry.path().string(), s, tmp.file("out")));
      CHECK_MESSAGE(r.exit_code == 0, r.err);
    }
  }
  CHECK(tried >= 15);
  const auto doc = json::parse(ddlsim::test::slurp(SOURCE + "/scenarios/eventgrad_cnn_event_adaptive_4w.json"));
  CHECK(doc["description"].get<std::string>().find("--set 'training.sync={\"name\": \"gossip\"}'") != std::string::npos);
}

TEST_CASE("docs/collectives.md's routing table is what its command prints") {
  const std::string md = ddlsim::test::slurp(SOURCE + "/docs/collectives.md");
  const auto at = md.find("--call-cost 0 --routing ROUTING");
  REQUIRE(at != std::string::npos);
  const auto start = md.rfind("./build/ddlsim collectives", at), end = md.find('\n', at);
  std::string command = md.substr(start, end - start);
  command = std::regex_replace(command, std::regex(R"(\\\n\s*)"), "");
  command = command.substr(std::string("./build/ddlsim ").size());
  for (const char* routing : {"shortest", "ecmp", "dmodk"}) {
    CAPTURE(routing);
    auto rows = ddlsim::test::collectives_csv(
        std::regex_replace(command.substr(std::string("collectives ").size()), std::regex("ROUTING"), routing));
    // The table's row: | `routing` | direct | halving_doubling | ring | ... (6 significant digits).
    const std::regex row(fmt::format(R"(\| `{}`[^|]*\| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|)", routing));
    std::smatch m;
    REQUIRE(std::regex_search(md, m, row));
    CHECK(fmt::format("{:.6g}", rows.at("direct").simulated_s) == m[1].str());
    CHECK(fmt::format("{:.6g}", rows.at("halving_doubling").simulated_s) == m[2].str());
    CHECK(fmt::format("{:.6g}", rows.at("ring").simulated_s) == m[3].str());
  }
}

TEST_CASE("crossbow's advice on a synthetic workload, batch_scaling linear, is valid and scales per sample") {
  TempDir tmp;
  json doc = ddlsim::test::small_scenario("crossbow");
  doc["training"] = {{"sync", {{"name", "crossbow"}, {"params", {{"learners_per_gpu", 2}}}}}};
  const std::string file = tmp.write("s.json", doc.dump());
  const std::string advice = ddlsim::test::bad_input("validate " + file);
  CHECK(advice.find("or \"batch_scaling\": \"linear\" in the workload to scale its times per sample") != std::string::npos);
  const auto ok = ddlsim::test::ddlsim(fmt::format("run {} --set workload.batch_scaling=linear --out {} --quiet", file,
                                                   tmp.file("out")));
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  const json summary = json::parse(ddlsim::test::slurp(tmp.path() / "out" / "summary.json"));
  CHECK(summary["sync_settings"]["samples_per_gpu_iteration"] == 64);  // 2 learners x the default batch of 32
  // Where no model computes another batch, scaling a synthetic workload would do nothing: refused.
  doc["training"] = {{"sync", {{"name", "bsp"}}}};
  CHECK(ddlsim::test::bad_input(fmt::format("validate {} --set workload.batch_scaling=linear",
                                            tmp.write("bsp.json", doc.dump()))) ==
        "ddlsim: error: /workload/batch_scaling: only with a \"profile\", or \"linear\" where the sync model computes "
        "another batch than batch_size (crossbow with learners_per_gpu > 1: its k x batch_size, scaled per sample): a "
        "synthetic workload's times are given per batch_size\n");
}

TEST_CASE("run --every-worker simulates every worker and writes the outputs of the classes") {
  TempDir tmp;
  const std::string scenario = SOURCE + "/scenarios/default.json --set network.fidelity=analytic --set platform.workers=64";
  const auto classes = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", scenario, tmp.file("classes")));
  const auto every = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet --every-worker", scenario, tmp.file("every")));
  REQUIRE(classes.exit_code == 0);
  REQUIRE(every.exit_code == 0);
  CHECK(classes.err.find("8 of 64 workers simulated") != std::string::npos);
  CHECK(every.err.find("workers simulated") == std::string::npos);
  for (const char* f : {"summary.json", "iterations.csv", "links.csv", "timeline.json"})
    CHECK_MESSAGE(ddlsim::test::slurp(tmp.path() / "classes" / f) == ddlsim::test::slurp(tmp.path() / "every" / f), f);
  const auto estimate = [&](const std::string& flag) {
    const auto r = ddlsim::test::ddlsim(fmt::format("run {} --estimate {}", scenario, flag));
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["simulated_workers"].get<double>();
  };
  CHECK(estimate("") == 8);
  CHECK(estimate("--every-worker") == 64);
  CHECK(ddlsim::test::ddlsim("run --help").out.find("--every-worker") != std::string::npos);
}

TEST_CASE("the run table: buckets only for models that send buckets, and both compression ratios named") {
  using ddlsim::test::TempDir;
  TempDir tmp;
  auto gossip = ddlsim::test::small_scenario("g");
  gossip["training"] = {{"sync", {{"name", "gossip"}}}};
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {}", tmp.write("g.json", gossip.dump()), tmp.file("g")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("buckets)") == std::string::npos);
  auto bsp = ddlsim::test::small_scenario("b");
  r = ddlsim::test::ddlsim(fmt::format("run {} --out {}", tmp.write("b.json", bsp.dump()), tmp.file("b")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("buckets)") != std::string::npos);
  // top-k at 1 %: k/n = 0.01, and its fp32 values plus int32 indices make wire / dense = 0.02.
  auto topk = ddlsim::test::small_scenario("t");
  topk["training"]["collective"] = {{"name", "auto"}};
  topk["training"]["compressor"] = {{"name", "topk"}, {"params", {{"ratio", 0.01}}}};
  topk["training"]["compression_cost"] = {{"encode", nlohmann::json::object()}, {"decode", nlohmann::json::object()}};
  r = ddlsim::test::ddlsim(fmt::format("run {} --out {}", tmp.write("t.json", topk.dump()), tmp.file("t")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("(k/n 0.01, wire/dense 0.02)") != std::string::npos);
}
