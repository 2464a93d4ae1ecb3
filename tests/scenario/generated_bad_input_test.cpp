// Generated bad input: every number and every quantity with a unit in bundled scenarios and a
// bundled profile, replaced in turn by each hostile value below, must give one line starting with
// the JSON path, exit code 2 and nothing else -- no crash, no internal error, no acceptance. The
// loop catches classes of mistakes (a reader without a range, a parse without a limit), not cases.
#include "tests/support/cli.hpp"

#include "models/json_reader.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <regex>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

/// The JSON pointers of every number and every "<number><unit>" string under `value`.
void quantities(const json& value, const std::string& path, std::vector<std::string>& out) {
  static const std::regex WITH_UNIT("[-+0-9.eE]+ *[A-Za-z]+");
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) quantities(child, ddlsim::pointer_append(path, key), out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) quantities(value[i], fmt::format("{}/{}", path, i), out);
  } else if (value.is_number() || (value.is_string() && std::regex_match(value.get<std::string>(), WITH_UNIT))) {
    out.push_back(path);
  }
}

/// The unit of a quantity string ("Gbps" of "25Gbps"), or "" for a number.
std::string unit_of(const json& value) {
  if (!value.is_string()) return "";
  const std::string s = value.get<std::string>();
  return s.substr(s.find_first_not_of("-+0-9.eE "));
}

/// The hostile replacements of a quantity, as JSON text (some are text no JSON value can hold).
std::vector<std::string> hostile_values(const json& original) {
  const std::string unit = unit_of(original);
  std::vector<std::string> values{"1e999", "1e308", "-1", std::string(400, '9'), "null", "\"\"", "[]", "-1e999"};
  values.push_back(fmt::format("\"1e308{}\"", unit.empty() ? "s" : unit));
  if (!unit.empty()) values.push_back(fmt::format("\"-1{}\"", unit));
  return values;
}

void expect_bad(const ddlsim::test::CommandResult& r, const std::string& prefix, const std::string& what) {
  INFO(what);
  INFO(r.err.substr(0, 300));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind(prefix, 0) == 0);
}

}  // namespace

TEST_CASE("generated bad input: every quantity of bundled scenarios, set to each hostile value") {
  for (const char* name : {"default.json", "resnet50_artopk_fluctuating_10gbps.json", "asp_one_slow_worker.json"}) {
    const std::string file = fmt::format("{}/scenarios/{}", DDLSIM_SOURCE_DIR, name);
    std::vector<std::string> paths;
    const json doc = json::parse(ddlsim::test::slurp(file));
    quantities(doc, "", paths);
    REQUIRE(paths.size() >= 5);
    for (const auto& path : paths)
      for (const auto& value : hostile_values(doc.at(json::json_pointer(path)))) {
        const std::string set = fmt::format("{}={}", path, value);
        expect_bad(ddlsim::test::ddlsim(fmt::format("validate {} --set '{}'", file, set)), "ddlsim: error: /",
                   fmt::format("{} --set {}", name, set.substr(0, 80)));
      }
  }
}

TEST_CASE("generated bad input: every quantity of a bundled profile, set to each hostile value") {
  TempDir tmp;
  const json profile = json::parse(ddlsim::test::slurp(std::string(DDLSIM_SOURCE_DIR) + "/scenarios/profiles/resnet18.json"));
  json trimmed = profile;
  trimmed["layers"] = json::array({profile["layers"][0], profile["layers"][1]});
  std::vector<std::string> paths;
  quantities(trimmed, "", paths);
  REQUIRE(paths.size() >= 5);
  const std::string scenario = tmp.write(
      "s.json", json{{"workload", {{"profile", tmp.file("p.json")}, {"iterations", 1}}}}.dump());
  for (const auto& path : paths)
    for (const auto& value : hostile_values(trimmed.at(json::json_pointer(path)))) {
      json doc = trimmed;
      doc[json::json_pointer(path)] = "HOSTILE";
      std::string text = doc.dump();
      text.replace(text.find("\"HOSTILE\""), 9, value);
      tmp.write("p.json", text);
      expect_bad(ddlsim::test::ddlsim(fmt::format("validate {}", scenario)),
                 fmt::format("ddlsim: error: /workload/profile: in profile file \"{}\": /", tmp.file("p.json")),
                 fmt::format("{} = {}", path, value.substr(0, 80)));
    }
}
