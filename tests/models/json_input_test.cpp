// Untrusted JSON text (models/json_input.cpp) and bounded messages (models/error.hpp): every
// refusal is a ConfigError at the path of the value, whatever the depth, size or number.
#include "models/json_input.hpp"
#include "models/json_reader.hpp"

#include "tests/models/json_text.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <string>

using namespace ddlsim;
using ddlsim::test::nested;

namespace {

std::string repeated(const std::string& part, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += part;
  return out;
}

}  // namespace

TEST_CASE("parse_json_text builds the same document as nlohmann's parser") {
  const std::string text = R"({"a": [1, -2, 3.5, "x", true, null, {"b": {}}, []], "c": {"d": 18446744073709551615}})";
  CHECK(parse_json_text(text) == json::parse(text));
  CHECK(parse_json_text("7") == json(7));
  CHECK(parse_json_text("1e-400") == json(0.0));  // underflow is zero, not an error
}

TEST_CASE("numbers beyond a double are refused at their path") {
  const std::string digits = repeated("9", 400);
  CHECK_THROWS_WITH_AS(parse_json_text(R"({"a": {"b": [0, 1e999]}})"),
                       "/a/b/1: number out of range: 1e999 does not fit in a double (magnitude at most 1.8e308)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_json_text("-1e400", "/platform/workers"),
                       "/platform/workers: number out of range: -1e400 does not fit in a double (magnitude at most "
                       "1.8e308)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_json_text(fmt::format(R"({{"n": {}}})", digits)),
                       fmt::format("/n: number out of range: {}... ({} bytes) does not fit in a double (magnitude at most "
                                   "1.8e308)",
                                   digits.substr(0, MAX_ECHO_CHARS), digits.size())
                           .c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_json_text("1e999"), "/: number out of range: 1e999 does not fit in a double (magnitude "
                                                 "at most 1.8e308)",
                       ConfigError);
}

TEST_CASE("nesting is bounded: the first container past the limit is refused at its path") {
  CHECK_NOTHROW(parse_json_text(nested(MAX_JSON_DEPTH, "[", "]")));
  std::string path;
  for (std::size_t i = 0; i < MAX_JSON_DEPTH; ++i) path += "/0";
  const std::string message = fmt::format(
      "nested deeper than {} levels of objects and arrays, the limit on a JSON input", MAX_JSON_DEPTH);
  CHECK_THROWS_WITH_AS(parse_json_text(nested(MAX_JSON_DEPTH + 1, "[", "]")), (path + ": " + message).c_str(),
                       ConfigError);
  // A million levels: refused without recursion, so without a stack overflow.
  CHECK_THROWS_WITH_AS(parse_json_text(nested(1'000'000, "[", "]")), (path + ": " + message).c_str(), ConfigError);
  std::string object_path;
  for (std::size_t i = 0; i < MAX_JSON_DEPTH; ++i) object_path += "/a";
  CHECK_THROWS_WITH_AS(parse_json_text(nested(100'000, R"({"a": )", "}")), (object_path + ": " + message).c_str(),
                       ConfigError);
}

TEST_CASE("a duplicate key is refused at its path") {
  CHECK_THROWS_WITH_AS(parse_json_text(R"({"p": [{"x": 1}, {"y": 1, "y": 2}]})"),
                       "/p/1/y: duplicate key \"y\"; a key may appear only once in an object", ConfigError);
  CHECK_THROWS_WITH_AS(parse_json_text(R"({"a~b/c": 1, "a~b/c": 1})", "/base"),
                       "/base/a~0b~1c: duplicate key \"a~b/c\"; a key may appear only once in an object", ConfigError);
  CHECK_NOTHROW(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 1}})"));  // the same key in two objects
}

TEST_CASE("syntax errors stay nlohmann's parse_error, with the token they quote cut") {
  CHECK_THROWS_AS(parse_json_text("{\"a\": }"), json::parse_error);
  const std::string text = fmt::format("\"{}", repeated("x", 100'000));  // an unterminated string
  try {
    (void)parse_json_option(text, "--params");
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("--params: malformed JSON: ", 0) == 0);
    CHECK(what.size() < 300);
  }
  CHECK_THROWS_WITH_AS(parse_json_option(R"({"ring": {"segments": 1e999}})", "--params"),
                       "--params: /ring/segments: number out of range: 1e999 does not fit in a double (magnitude at "
                       "most 1.8e308)",
                       ConfigError);
}

TEST_CASE("excerpt and ConfigError keep every message one bounded line") {
  CHECK(excerpt("short") == "short");
  CHECK(excerpt(repeated("a", 60)) == repeated("a", 60));
  CHECK(excerpt(repeated("a", 61)) == repeated("a", 60) + "... (61 bytes)");
  CHECK(excerpt("a\nb\tc\x01") == "a\\nb\\tc\\x01");
  CHECK(excerpt(repeated("\xc3\xa9", 61)) == repeated("\xc3\xa9", 60) + "... (122 bytes)");  // cut between characters
  const ConfigError long_error("/k", repeated("m", 10'000'000));
  CHECK(std::string(long_error.what()) ==
        fmt::format("/k: {}... ({} bytes)", repeated("m", MAX_MESSAGE_CHARS), 10'000'000));
  const ConfigError newline("/a\nb", "x\ny");
  CHECK(std::string(newline.what()) == "/a\\nb: x\\ny");
  CHECK(newline.path() == "/a\\nb");
}

