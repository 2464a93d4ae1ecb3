// ddlsim: JSON values described in error messages (models/json_reader.hpp: value_text,
// json_type_name, join_names).
#include "models/error.hpp"
#include "models/json_reader.hpp"

#include <fmt/format.h>

namespace ddlsim {

std::string value_text(const json& value) {
  // Text typed on a command line need not be UTF-8: such bytes show as U+FFFD, never throw.
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!value.is_string()) return excerpt(text);
  return fmt::format("\"{}\"", excerpt(std::string_view(text).substr(1, text.size() - 2)));
}

std::string json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return fmt::format("the string {}", value_text(value));
    case json::value_t::boolean: return fmt::format("the boolean {}", value.dump());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return fmt::format("the number {}", value_text(value));
    default: return value_text(value);
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace ddlsim
