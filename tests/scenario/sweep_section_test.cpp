// The scenario's "sweep" section (analysis/sweep.py's grid): `run` and `validate` accept a
// well-formed one and ignore it; a malformed one is one line naming its path, exit 2.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

json with_sweep(const json& sweep) {
  json doc = json::parse(R"({
    "name": "sweep-section",
    "platform": {"topology": "star", "workers": 4, "link": {"bandwidth": "10Gbps", "latency": "1us"}},
    "network": {"fidelity": "analytic"},
    "workload": {"synthetic": {"layers": 2}, "iterations": 2},
    "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"}}
  })");
  doc["sweep"] = sweep;
  return doc;
}

/// `ddlsim validate` of `doc`: its stderr, after checking exit code 2 and one line.
std::string validate_error(const json& doc) {
  TempDir tmp;
  auto r = ddlsim::test::ddlsim("validate " + tmp.write("scenario.json", doc.dump(2)));
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  return r.err;
}

}  // namespace

TEST_CASE("a sweep section is accepted and ignored by run and validate") {
  TempDir tmp;
  const json sweep = json::parse(R"({"platform.workers": [1, 2, 4, 8], "/platform/link/bandwidth": ["10Gbps", 1e9],
                                     "training.bucketing": [{"policy": "size"}, null, true]})");
  const std::string file = tmp.write("scenario.json", with_sweep(sweep).dump(2));
  auto v = ddlsim::test::ddlsim("validate " + file);
  CHECK_MESSAGE(v.exit_code == 0, v.err);
  // The run simulates the scenario's own platform.workers (4), not a point of the grid.
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --quiet --set output.timeline=false --out {}", file, tmp.file("out")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json summary = json::parse(ddlsim::test::slurp(tmp.path() / "out" / "summary.json"));
  CHECK(summary.at("workers") == 4);
}

TEST_CASE("a malformed sweep section is refused with its path") {
  CHECK(validate_error(with_sweep(json::array({1, 2}))) ==
        "ddlsim: error: /sweep: expected an object of override paths to arrays of values, e.g. "
        "{\"platform.workers\": [1, 2, 4]}, got an array\n");
  CHECK(validate_error(with_sweep({{"platform.workers", 4}})) ==
        "ddlsim: error: /sweep/platform.workers: expected a non-empty array of values, got the number 4\n");
  CHECK(validate_error(with_sweep({{"platform.workers", json::array()}})) ==
        "ddlsim: error: /sweep/platform.workers: expected a non-empty array of values, got an empty array\n");
  CHECK(validate_error(with_sweep({{"platform workers", {1}}})) ==
        "ddlsim: error: /sweep/platform workers: \"platform workers\" is not an override path: use a dotted path "
        "(platform.workers) or a JSON pointer (/platform/workers)\n");
  CHECK(validate_error(with_sweep({{"platform..workers", {1}}})).find("is not an override path") != std::string::npos);
  CHECK(validate_error(with_sweep({{"sweep.x", {1}}})) ==
        "ddlsim: error: /sweep/sweep.x: a sweep cannot vary its own section\n");
  CHECK(validate_error(with_sweep({{"platform.workers", {1, 2, 1}}})) ==
        "ddlsim: error: /sweep/platform.workers/2: 1 is listed twice (also at index 0)\n");
  // Keys are read in nlohmann's (sorted) order: "/platform/workers" before "platform.workers".
  CHECK(validate_error(with_sweep({{"platform.workers", {1}}, {"/platform/workers", {2}}})) ==
        "ddlsim: error: /sweep/platform.workers: names the same field as \"/platform/workers\"\n");
}
