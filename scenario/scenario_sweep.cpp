// ddlsim: the scenario's "sweep" section, {"platform.workers": [1, 2, 4, 8], ...}: the grid that
// analysis/sweep.py runs, one `ddlsim run` per point (docs/analysis.md). `run` and `validate`
// ignore it; they only check its shape, so a typo fails here rather than on a cluster.
#include "scenario/scenario.hpp"

#include <fmt/format.h>
#include <map>
#include <regex>

namespace ddlsim::sim {
namespace {

constexpr std::size_t MAX_OVERRIDE_PATH_BYTES = 1000;

/// The JSON pointer an override path names (as apply_override reads it), or nullopt if `path` is
/// neither a dotted path of names nor a JSON pointer.
std::optional<std::string> override_pointer(const std::string& path) {
  // std::regex recurses per character: a key of megabytes would overflow the stack. No path is this long.
  if (path.size() > MAX_OVERRIDE_PATH_BYTES) return std::nullopt;
  static const std::regex dotted("[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*");
  static const std::regex pointer("(/([^~/\\s=]|~[01])*)+");
  if (std::regex_match(path, pointer)) return path;
  if (!std::regex_match(path, dotted)) return std::nullopt;
  std::string result;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    result = pointer_append(result, path.substr(start, dot - start));
    if (dot == std::string::npos) return result;
    start = dot + 1;
  }
}

}  // namespace

void check_sweep_section(const json* sweep) {
  if (sweep == nullptr) return;
  if (!sweep->is_object())
    throw ConfigError("/sweep", fmt::format("expected an object of override paths to arrays of values, e.g. "
                                            "{{\"platform.workers\": [1, 2, 4]}}, got {}",
                                            json_type_name(*sweep)));
  std::map<std::string, std::string> seen;  // pointer -> key naming it
  for (const auto& [key, values] : sweep->items()) {
    const std::string path = pointer_append("/sweep", key);
    const auto pointer = override_pointer(key);
    if (!pointer)
      throw ConfigError(path, fmt::format("\"{}\" is not an override path: use a dotted path (platform.workers) or "
                                          "a JSON pointer (/platform/workers)",
                                          excerpt(key)));
    if (*pointer == "/sweep" || pointer->rfind("/sweep/", 0) == 0)
      throw ConfigError(path, "a sweep cannot vary its own section");
    if (const auto [it, fresh] = seen.emplace(*pointer, key); !fresh)
      throw ConfigError(path, fmt::format("names the same field as \"{}\"", excerpt(it->second)));
    if (!values.is_array() || values.empty())
      throw ConfigError(path, fmt::format("expected a non-empty array of values, got {}",
                                          values.is_array() ? "an empty array" : json_type_name(values)));
    for (std::size_t i = 0; i < values.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (values[i] == values[j])
          throw ConfigError(pointer_append(path, std::to_string(i)),
                            fmt::format("{} is listed twice (also at index {})", value_text(values[i]), j));
  }
}

}  // namespace ddlsim::sim
