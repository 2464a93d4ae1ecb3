// ddlsim: "--set PATH=VALUE" (README, docs/scenario.md): one override applied to the scenario
// document before validation. The value is parsed like a scenario file (models/json_input.hpp:
// depth, duplicate keys, number overflow), and taken as a string when it is not JSON.
#include "scenario/scenario.hpp"

#include <charconv>
#include <fmt/format.h>

namespace ddlsim::sim {
namespace {

/// `path` (dotted, or a JSON pointer) as a JSON pointer.
json::json_pointer pointer_of(const std::string& path, const std::string& assignment) {
  std::string pointer = path;
  if (path.front() != '/') {
    pointer.clear();
    std::size_t start = 0;
    while (true) {
      auto dot = path.find('.', start);
      pointer = pointer_append(pointer, path.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }
  try {
    return json::json_pointer(pointer);
  } catch (const json::exception&) {
    throw ConfigError("--set", fmt::format("\"{}\": a JSON pointer escapes \"~\" as ~0 and \"/\" as ~1; any other "
                                           "\"~\" is invalid",
                                           excerpt(assignment)));
  }
}

}  // namespace

void apply_override(json& doc, const std::string& assignment) {
  try {  // a value that is not JSON is taken as a string, which must be text (JSON strings are UTF-8)
    (void)json(assignment).dump();
  } catch (const json::type_error& e) {
    const std::string what = e.what();
    const auto at = what.find("invalid UTF-8 byte");
    throw ConfigError("--set", fmt::format("the assignment is not UTF-8 text: {}",
                                           at == std::string::npos ? what : what.substr(at)));
  }
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("", fmt::format("--set \"{}\": expected PATH=VALUE, e.g. platform.workers=16", excerpt(assignment)));
  const json::json_pointer pointer = pointer_of(assignment.substr(0, eq), assignment);
  const std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = parse_json_text(text, pointer.to_string());
  } catch (const json::parse_error&) {
    value = text;  // a bare word such as 25Gbps or tree
  }
  // Walk, creating intermediate objects; refuse to walk through a non-object.
  json* node = &doc;
  std::vector<std::string> tokens;
  for (auto p = pointer; !p.empty(); p = p.parent_pointer()) tokens.insert(tokens.begin(), p.back());
  std::string walked;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (node->is_null()) *node = json::object();
    const auto& t = tokens[i];
    if (node->is_array()) {
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), index);
      if (t.empty() || ec != std::errc() || end != t.data() + t.size() || index >= node->size())
        throw ConfigError(walked.empty() ? "/" : walked,
                          fmt::format("--set: no element \"{}\" in an array of {} elements", excerpt(t), node->size()));
      node = &(*node)[index];
    } else if (node->is_object()) {
      node = &(*node)[t];
    } else {
      throw ConfigError(walked.empty() ? "/" : walked,
                        fmt::format("--set: cannot set \"{}\" inside {}", excerpt(t), json_type_name(*node)));
    }
    walked = pointer_append(walked, t);
  }
  *node = value;
}

}  // namespace ddlsim::sim
