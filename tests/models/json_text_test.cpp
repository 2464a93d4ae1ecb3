// JSON values described in error messages (models/json_text.cpp): value_text (a value's JSON text,
// a string's content cut inside its quotes, anything else cut whole, bytes that are not UTF-8
// replaced), json_type_name and join_names.
#include "models/error.hpp"
#include "models/json_reader.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <string>
#include <vector>

using namespace ddlsim;

TEST_CASE("value_text: JSON text, a long string cut inside its quotes, a long value cut whole, never throwing") {
  CHECK(value_text(json(1.5)) == "1.5");
  CHECK(value_text(json(-7)) == "-7");
  CHECK(value_text(json(true)) == "true");
  CHECK(value_text(json(nullptr)) == "null");
  CHECK(value_text(json::parse(R"({"a": [1, 2]})")) == R"({"a":[1,2]})");
  CHECK(value_text(json("abc")) == R"("abc")");
  CHECK(value_text(json("a\nb")) == R"("a\nb")");  // JSON's own escape, kept on one line
  // A string: its first MAX_ECHO_CHARS characters inside the quotes, then the length of the whole.
  const std::string long_string(MAX_ECHO_CHARS + 40, 'x');
  CHECK(value_text(json(long_string)) ==
        "\"" + std::string(MAX_ECHO_CHARS, 'x') + "... (" + std::to_string(long_string.size()) + " bytes)\"");
  // Anything else: its JSON text cut the same way.
  json numbers = json::array();
  for (int i = 0; i < 30; ++i) numbers.push_back(i);
  const std::string text = numbers.dump();
  REQUIRE(text.size() > MAX_ECHO_CHARS);
  CHECK(value_text(numbers) == text.substr(0, MAX_ECHO_CHARS) + "... (" + std::to_string(text.size()) + " bytes)");
  // Bytes that are not UTF-8 (typed on a command line) show as U+FFFD.
  CHECK(value_text(json(std::string("a\xff" "b"))) == "\"a\xef\xbf\xbd" "b\"");
}

TEST_CASE("json_type_name: the article and the value for scalars, the kind for containers") {
  CHECK(json_type_name(json(nullptr)) == "null");
  CHECK(json_type_name(json::object()) == "an object");
  CHECK(json_type_name(json::array({1, 2})) == "an array");
  CHECK(json_type_name(json("s")) == "the string \"s\"");
  CHECK(json_type_name(json(false)) == "the boolean false");
  CHECK(json_type_name(json(-3)) == "the number -3");
  CHECK(json_type_name(json(18446744073709551615ULL)) == "the number 18446744073709551615");
  CHECK(json_type_name(json(0.5)) == "the number 0.5");
  const std::string long_name(100, 'n');
  CHECK(json_type_name(json(long_name)) == fmt::format("the string \"{}... (100 bytes)\"", std::string(MAX_ECHO_CHARS, 'n')));
}

TEST_CASE("join_names: comma-separated, in the order given") {
  CHECK(join_names({}).empty());
  CHECK(join_names({"ring"}) == "ring");
  CHECK(join_names({"b", "a", "c"}) == "b, a, c");
}
