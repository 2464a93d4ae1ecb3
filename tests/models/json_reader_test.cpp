// Reading one JSON object with JSON-pointer errors (models/json_reader.cpp): each accessor's
// checks and exact messages, unknown keys refused by finish() listing the keys asked for, the
// misspelling hint, pointer escaping, and a referenced file's errors under the scenario's path.
#include "models/json_reader.hpp"

#include <cstdint>
#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>

using namespace ddlsim;

namespace {

std::string repeated(const std::string& part, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += part;
  return out;
}

}  // namespace

TEST_CASE("ObjectReader: null is not an object, a close unknown key is named when one is missing") {
  const json doc = json::parse(R"({"section": null, "bandwdith": "1Gbps"})");
  ObjectReader r(doc, "/x");
  CHECK_THROWS_WITH_AS(r.object("section"), "/x/section: expected an object, got null", ConfigError);
  CHECK_NOTHROW(r.object("absent"));  // a section left out reads as empty
  CHECK_THROWS_WITH_AS(r.require("bandwidth"),
                       "/x/bandwidth: missing required key; found the unknown key \"bandwdith\" (misspelt?)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(r.require("latency"), "/x/latency: missing required key", ConfigError);
  const json value = json(repeated("v", 10'000'000));
  CHECK_THROWS_WITH_AS(checked_number(value, "/n", 0, 1),
                       fmt::format("/n: expected a number, got the string \"{}... (10000000 bytes)\"", repeated("v", MAX_ECHO_CHARS))
                           .c_str(),
                       ConfigError);
}

TEST_CASE("ObjectReader: typed accessors read values and defaults, and refuse others with the value's path") {
  const json doc = json::parse(R"({"name": "x", "n": 3, "whole": 2.0, "half": 2.5, "flag": true, "ratio": 0.25,
                                   "kind": "b", "big": 18446744073709551615, "bw": "8Gbps", "t": "2ms", "lat": "2s",
                                   "size": "1KiB", "inner": {"k": 1}})");
  ObjectReader r(doc, "/o");
  CHECK(r.path() == "/o");
  CHECK(r.string("name", "") == "x");
  CHECK(r.string("absent", "fallback") == "fallback");
  CHECK(r.integer("n", 0, 0, 10) == 3);
  CHECK(r.integer("whole", 0, 0, 10) == 2);  // a float that is a whole number is an integer
  CHECK(r.number("ratio", 0, 0, 1) == 0.25);
  CHECK(r.boolean("flag", false));
  CHECK(r.choice("kind", {"a", "b"}, "a") == "b");
  CHECK(r.bandwidth_Bps("bw", 0) == 1e9);  // 8 Gbit/s = 1e9 B/s
  CHECK(r.time_s("t", 0) == doctest::Approx(2e-3).epsilon(1e-15));
  CHECK(r.bytes("size", 0) == 1024);
  CHECK(r.time_s("absent_time", 7) == 7);
  CHECK(r.object("inner").integer("k", 0, 0, 1) == 1);
  CHECK(r.object("inner").path() == "/o/inner");

  CHECK_THROWS_WITH_AS(r.integer("half", 0, 0, 10), "/o/half: expected an integer, got the number 2.5", ConfigError);
  CHECK_THROWS_WITH_AS(r.integer("n", 0, 4, 10), "/o/n: expected an integer in [4, 10], got 3", ConfigError);
  CHECK_THROWS_WITH_AS(r.integer("big", 0, 0, std::numeric_limits<std::int64_t>::max()),
                       "/o/big: expected an integer in [0, 9223372036854775807], got 18446744073709551615", ConfigError);
  CHECK_THROWS_WITH_AS(r.number("ratio", 0, 0.5, 1), "/o/ratio: expected a number in [0.5, 1], got 0.25", ConfigError);
  CHECK_THROWS_WITH_AS(r.number("ratio", 0, 0.5, std::numeric_limits<double>::infinity()),
                       "/o/ratio: expected a number in [0.5, inf], got 0.25", ConfigError);
  CHECK_THROWS_WITH_AS(r.number("name", 0, 0, 1), "/o/name: expected a number, got the string \"x\"", ConfigError);
  CHECK_THROWS_WITH_AS(r.string("n", ""), "/o/n: expected a string, got the number 3", ConfigError);
  CHECK_THROWS_WITH_AS(r.required_string("flag"), "/o/flag: expected a string, got the boolean true", ConfigError);
  CHECK_THROWS_WITH_AS(r.boolean("name", false), "/o/name: expected true or false, got the string \"x\"", ConfigError);
  CHECK_THROWS_WITH_AS(r.choice("kind", {"a", "c"}, "a"), "/o/kind: unknown value \"b\"; valid values are: a, c",
                       ConfigError);
  CHECK_THROWS_WITH_AS(r.latency_s("lat", 0), "/o/lat: time out of range: expected 0 or 1e-15 s to 1 s, got \"2s\"",
                       ConfigError);
  CHECK(r.time_s("lat", 0) == 2);  // a compute time may be longer than a latency
  CHECK_THROWS_WITH_AS(r.object("name"), "/o/name: expected an object, got the string \"x\"", ConfigError);
  CHECK_THROWS_WITH_AS(r.required_integer("count", 0, 1), "/o/count: missing required key", ConfigError);
  CHECK_THROWS_WITH_AS(ObjectReader(json::array(), ""), "/: expected an object, got an array", ConfigError);
  CHECK(checked_integer(json(5), "/v", 5, 5) == 5);
  CHECK(checked_number(json(-0.5), "/v", -1, 0) == -0.5);
}

TEST_CASE("ObjectReader: finish refuses the first key never asked about, listing those that were") {
  const json doc = json::parse(R"({"alpha": 1, "beta": 2, "gamma": 3})");
  ObjectReader r(doc, "/s");
  (void)r.has("beta");
  (void)r.find("alpha");
  (void)r.find("delta");  // asked about, absent: still a valid key
  CHECK_THROWS_WITH_AS(r.finish(), "/s/gamma: unknown key \"gamma\"; valid keys are: alpha, beta, delta", ConfigError);
  (void)r.has("gamma");
  CHECK_NOTHROW(r.finish());
  const json one{{"x", 1}};
  CHECK_THROWS_WITH_AS(ObjectReader(one, "/e").finish(), "/e/x: unknown key \"x\"; valid keys are: (none)", ConfigError);
  // Misspellings: two edits for keys of 4 characters or more, one below, case folded; keys already asked never hint.
  const json typo = json::parse(R"({"Latnecy": 1, "bw": 2, "abc": 3})");
  ObjectReader t(typo, "/t");
  CHECK(t.misspelling_hint("latency") == "; found the unknown key \"Latnecy\" (misspelt?)");
  CHECK(t.misspelling_hint("bx") == "; found the unknown key \"bw\" (misspelt?)");
  CHECK(t.misspelling_hint("xyz") == "");  // three edits from "abc"
  CHECK(t.misspelling_hint("by") == "; found the unknown key \"bw\" (misspelt?)");
  (void)t.has("bw");
  CHECK(t.misspelling_hint("by") == "");
}

TEST_CASE("pointer_append escapes ~ and /, and a referenced file's errors carry the scenario's path") {
  CHECK(pointer_append("/a", "b") == "/a/b");
  CHECK(pointer_append("", "x/y~z") == "/x~1y~0z");
  CHECK(pointer_append("/p", "") == "/p/");
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("ddlsim-json-reader-test-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "thing.json").string();
  std::ofstream(file) << R"({"n": 12})";
  const auto read_n = [](const json& doc) {
    ObjectReader r(doc, "");
    const auto n = r.integer("n", 0, 0, 10);
    r.finish();
    return n;
  };
  CHECK_THROWS_WITH_AS(load_referenced(file, "thing", "/workload/thing", read_n),
                       fmt::format("/workload/thing: in thing \"{}\": /n: expected an integer in [0, 10], got 12", file).c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_referenced(file, "thing", "/workload/thing", read_n, " file"),
                       fmt::format("/workload/thing: in thing file \"{}\": /n: expected an integer in [0, 10], got 12", file).c_str(),
                       ConfigError);
  std::ofstream(file) << R"({"n": 7})";
  CHECK(load_referenced(file, "thing", "/workload/thing", read_n) == 7);
  CHECK_THROWS_WITH_AS(load_referenced((dir / "none.json").string(), "thing", "/workload/thing", read_n),
                       fmt::format("/workload/thing: cannot open thing file \"{}\"", (dir / "none.json").string()).c_str(),
                       ConfigError);
  std::filesystem::remove_all(dir);
}
