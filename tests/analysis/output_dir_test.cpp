// The output directory of `ddlsim run`: an unusable one is bad input (exit 2, one line naming
// --out or /output/dir, checked before the run, nothing written); the outputs are replaced all at
// once, so a killed run leaves the previous ones whole.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>

using ddlsim::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json small(int iterations) {
  return json{{"name", "outputs"},
              {"platform", {{"topology", "star"}, {"workers", 4}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
              {"workload",
               {{"synthetic", {{"layers", 2}, {"forward_s", "1ms"}, {"backward_s", "1ms"}, {"grad_bytes", "1MB"}}},
                {"iterations", iterations}}},
              {"training", {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}}}}};
}

/// The names in `dir`, sorted.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// `ddlsim <args>` must fail with exit 2 and exactly `message`, writing nothing into `tmp`.
void refused(const TempDir& tmp, const std::string& args, const std::string& message) {
  const auto before = listing(tmp.path());
  const auto r = ddlsim::test::ddlsim(args);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == message);
  CHECK(listing(tmp.path()) == before);
}

/// Every output file of `dir` by name, with its content.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& name : listing(dir)) out[name] = ddlsim::test::slurp(dir / name);
  return out;
}

}  // namespace

TEST_CASE("run refuses an output directory that is a file, below a file, a device or the scenario itself") {
  TempDir tmp;
  const std::string scenario = tmp.write("s.json", small(1).dump());
  const std::string file = tmp.write("file.txt", "not a directory\n");
  refused(tmp, fmt::format("run {} --out {}", scenario, file),
          fmt::format("ddlsim: error: --out: \"{}\" is a file, not a directory\n", file));
  refused(tmp, fmt::format("run {} --out {}/sub", scenario, file),
          fmt::format("ddlsim: error: --out: \"{}/sub\" cannot be created: \"{}\" is not a directory\n", file, file));
  refused(tmp, fmt::format("run {} --out {}/a/b", scenario, file),
          fmt::format("ddlsim: error: --out: \"{}/a/b\" cannot be created: \"{}\" is not a directory\n", file, file));
  refused(tmp, fmt::format("run {} --out /dev/null", scenario),
          "ddlsim: error: --out: \"/dev/null\" is not a directory\n");
  refused(tmp, fmt::format("run {} --out {}", scenario, scenario),
          fmt::format("ddlsim: error: --out: \"{}\" is the scenario file, not a directory\n", scenario));
  // The same through the scenario's output.dir, named by its JSON path.
  refused(tmp, fmt::format("run {} --set output.dir={}", scenario, scenario),
          fmt::format("ddlsim: error: /output/dir: \"{}\" is the scenario file, not a directory\n", scenario));
  refused(tmp, fmt::format("run {} --set output.dir={}/sub", scenario, file),
          fmt::format("ddlsim: error: /output/dir: \"{}/sub\" cannot be created: \"{}\" is not a directory\n", file,
                      file));
  refused(tmp, fmt::format("run {} --set output.dir=/dev/null", scenario),
          "ddlsim: error: /output/dir: \"/dev/null\" is not a directory\n");
}

TEST_CASE("a killed run leaves the previous outputs whole, and the next run replaces them all at once") {
  TempDir tmp;
  const std::string out = tmp.file("out");
  const std::string two = tmp.write("two.json", small(2).dump());
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", two, out)).exit_code == 0);
  const auto old = contents(out);
  REQUIRE(old.size() == 4);  // summary.json, iterations.csv, links.csv, timeline.json

  // A long run into the same directory, killed outright once it has streamed some rows.
  const std::string longer = tmp.write("long.json", small(1'000'000).dump());
  {
    ddlsim::test::Background run({"run", longer, "--out", out, "--quiet", "--force"});
    REQUIRE(ddlsim::test::poll_until([&] {
      const auto staging = ddlsim::test::staging_folder(out);
      std::error_code ec;
      return staging && fs::file_size(*staging / "iterations.csv", ec) > 1000;
    }));
    run.signal(SIGKILL);
    CHECK(run.wait().exit_code == 128 + SIGKILL);
  }
  CHECK(contents(out) == old);  // every file as it was
  const auto left = ddlsim::test::staging_folder(out);
  REQUIRE(left);  // only a process killed outright leaves its staging folder
  fs::remove_all(*left);

  // The next run replaces the whole set: without a timeline, the old timeline.json goes too.
  const std::string three = tmp.write("three.json", small(3).dump());
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet --set output.timeline=false", three, out)).exit_code == 0);
  CHECK(listing(out) == std::vector<std::string>{"iterations.csv", "links.csv", "summary.json"});
  CHECK(json::parse(ddlsim::test::slurp(fs::path(out) / "summary.json"))["iterations_completed"] == 3);
  CHECK_FALSE(ddlsim::test::staging_folder(out));
  CHECK(listing(tmp.path()) == std::vector<std::string>{"long.json", "out", "three.json", "two.json"});
}

TEST_CASE("a directory holding other files keeps them: only the outputs are replaced, summary.json last") {
  TempDir tmp;
  const std::string out = tmp.file("out");
  const std::string scenario = tmp.write("s.json", small(2).dump());
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", scenario, out)).exit_code == 0);
  std::ofstream(fs::path(out) / "notes.txt") << "mine\n";
  REQUIRE(ddlsim::test::ddlsim(
              fmt::format("run {} --out {} --quiet --set output.timeline=false --set output.iterations_csv=false", scenario, out))
              .exit_code == 0);
  CHECK(listing(out) == std::vector<std::string>{"links.csv", "notes.txt", "summary.json"});
  CHECK(ddlsim::test::slurp(fs::path(out) / "notes.txt") == "mine\n");
  CHECK_FALSE(ddlsim::test::staging_folder(out));
}

TEST_CASE("output.iterations_csv false writes no iterations.csv, and the summary is the same") {
  TempDir tmp;
  const std::string scenario = tmp.write("s.json", small(5).dump());
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", scenario, tmp.file("a"))).exit_code == 0);
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet --set output.iterations_csv=false", scenario,
                                           tmp.file("b")))
              .exit_code == 0);
  CHECK_FALSE(fs::exists(tmp.path() / "b" / "iterations.csv"));
  CHECK(ddlsim::test::slurp(tmp.path() / "a" / "summary.json") == ddlsim::test::slurp(tmp.path() / "b" / "summary.json"));
}

TEST_CASE("an output directory given as a symbolic link keeps the link: its directory gets the files") {
  TempDir tmp;
  const std::string scenario = tmp.write("s.json", small(2).dump());
  fs::create_directory(tmp.path() / "real");
  fs::create_directory_symlink("real", tmp.path() / "latest");
  for (int run = 0; run < 2; ++run)  // into an empty directory, then over the previous outputs
    REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", scenario, tmp.file("latest"))).exit_code == 0);
  CHECK(fs::is_symlink(tmp.path() / "latest"));
  CHECK(listing(tmp.path() / "real") ==
        std::vector<std::string>{"iterations.csv", "links.csv", "summary.json", "timeline.json"});
  CHECK(listing(tmp.path()) == std::vector<std::string>{"latest", "real", "s.json"});
}
