#include "models/json_reader.hpp"

#include "models/units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ddlsim {
namespace {
const json& empty_object() {
  static const json EMPTY = json::object();
  return EMPTY;
}

/// Levenshtein distance, ASCII case folded.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      const std::size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::string number_text(double v) {
  if (v == std::numeric_limits<double>::infinity()) return "inf";
  if (v == -std::numeric_limits<double>::infinity()) return "-inf";
  return fmt::format("{}", v);
}
}  // namespace

std::string pointer_append(const std::string& path, const std::string& key) {
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path + "/" + escaped;
}

ObjectReader::ObjectReader(const json& value, std::string path) : value_(&value), path_(std::move(path)) {
  if (!value.is_object())
    throw ConfigError(path_.empty() ? "/" : path_, fmt::format("expected an object, got {}", json_type_name(value)));
}

const json* ObjectReader::find(const std::string& key) {
  known_.insert(key);
  auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

bool ObjectReader::has(const std::string& key) { return find(key) != nullptr; }

const json& ObjectReader::require(const std::string& key) {
  const json* v = find(key);
  if (v == nullptr) throw ConfigError(path_of(key), "missing required key" + misspelling_hint(key));
  return *v;
}

std::string ObjectReader::misspelling_hint(const std::string& key) const {
  const std::size_t tolerance = key.size() >= 4 ? 2 : 1;
  for (const auto& item : value_->items())
    if (known_.count(item.key()) == 0 && item.key().size() < 4 * key.size() + 8 &&
        edit_distance(key, item.key()) <= tolerance)
      return fmt::format("; found the unknown key \"{}\" (misspelt?)", excerpt(item.key()));
  return "";
}

std::string ObjectReader::string(const std::string& key, const std::string& fallback) {
  const json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) throw ConfigError(path_of(key), fmt::format("expected a string, got {}", json_type_name(*v)));
  return v->get<std::string>();
}

std::string ObjectReader::required_string(const std::string& key) {
  const json& v = require(key);
  if (!v.is_string()) throw ConfigError(path_of(key), fmt::format("expected a string, got {}", json_type_name(v)));
  return v.get<std::string>();
}

std::string ObjectReader::choice(const std::string& key, const std::vector<std::string>& choices,
                                 const std::string& fallback) {
  std::string s = string(key, fallback);
  for (const auto& c : choices)
    if (c == s) return s;
  throw ConfigError(path_of(key),
                    fmt::format("unknown value \"{}\"; valid values are: {}", excerpt(s), join_names(choices)));
}

bool ObjectReader::boolean(const std::string& key, bool fallback) {
  const json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) throw ConfigError(path_of(key), fmt::format("expected true or false, got {}", json_type_name(*v)));
  return v->get<bool>();
}

double checked_number(const json& value, const std::string& path, double min, double max) {
  if (!value.is_number()) throw ConfigError(path, fmt::format("expected a number, got {}", json_type_name(value)));
  double d = value.get<double>();
  if (!std::isfinite(d) || d < min || d > max)
    throw ConfigError(path, fmt::format("expected a number in [{}, {}], got {}", number_text(min), number_text(max),
                                        value_text(value)));
  return d;
}

std::int64_t checked_integer(const json& value, const std::string& path, std::int64_t min, std::int64_t max) {
  bool integral = value.is_number_integer() || value.is_number_unsigned() ||
                  (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>() &&
                   std::fabs(value.get<double>()) < 9e15);
  if (!integral) throw ConfigError(path, fmt::format("expected an integer, got {}", json_type_name(value)));
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    throw ConfigError(path, fmt::format("expected an integer in [{}, {}], got {}", min, max, value_text(value)));
  auto i = value.is_number_float() ? static_cast<std::int64_t>(value.get<double>()) : value.get<std::int64_t>();
  if (i < min || i > max)
    throw ConfigError(path, fmt::format("expected an integer in [{}, {}], got {}", min, max, value_text(value)));
  return i;
}

double ObjectReader::number(const std::string& key, double fallback, double min, double max) {
  const json* v = find(key);
  return v == nullptr ? fallback : checked_number(*v, path_of(key), min, max);
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const json* v = find(key);
  return v == nullptr ? fallback : checked_integer(*v, path_of(key), min, max);
}

std::int64_t ObjectReader::required_integer(const std::string& key, std::int64_t min, std::int64_t max) {
  return checked_integer(require(key), path_of(key), min, max);
}

double ObjectReader::bandwidth_Bps(const std::string& key, double fallback) {
  const json* v = find(key);
  return v == nullptr ? fallback : units::bandwidth_Bps(*v, path_of(key));
}

double ObjectReader::time_s(const std::string& key, double fallback) {
  const json* v = find(key);
  return v == nullptr ? fallback : units::time_s(*v, path_of(key));
}

double ObjectReader::latency_s(const std::string& key, double fallback) {
  const json* v = find(key);
  return v == nullptr ? fallback : units::time_s(*v, path_of(key), units::MAX_LATENCY_S);
}

double ObjectReader::bytes(const std::string& key, double fallback) {
  const json* v = find(key);
  return v == nullptr ? fallback : units::bytes(*v, path_of(key));
}

ObjectReader ObjectReader::object(const std::string& key) {
  const json* v = find(key);
  return ObjectReader(v == nullptr ? empty_object() : *v, path_of(key));
}

void ObjectReader::finish() const {
  for (const auto& item : value_->items()) {
    if (known_.count(item.key()) == 0) {
      std::vector<std::string> valid(known_.begin(), known_.end());
      throw ConfigError(path_of(item.key()),
                        fmt::format("unknown key \"{}\"; valid keys are: {}", excerpt(item.key()),
                                    valid.empty() ? std::string("(none)") : join_names(valid)));
    }
  }
}

}  // namespace ddlsim
