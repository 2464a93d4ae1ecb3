#include "models/json_reader.hpp"

#include "models/units.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <fmt/format.h>
#include <limits>

namespace ddlsim {
namespace {
const json& empty_object() {
  static const json EMPTY = json::object();
  return EMPTY;
}

std::string number_text(double v) {
  if (v == std::numeric_limits<double>::infinity()) return "inf";
  if (v == -std::numeric_limits<double>::infinity()) return "-inf";
  return fmt::format("{}", v);
}
}  // namespace

std::string json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return fmt::format("the string {}", value.dump());
    case json::value_t::boolean: return fmt::format("the boolean {}", value.dump());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return fmt::format("the number {}", value.dump());
    default: return value.dump();
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string pointer_append(const std::string& path, const std::string& key) {
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path + "/" + escaped;
}

json read_json_file(const std::string& file, const std::string& what) {
  std::ifstream in(file);
  if (!in) throw ConfigError("", fmt::format("cannot open {} file \"{}\"", what, file));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // Line and column from the byte offset nlohmann reports (1-based; the offset is one past the error).
    std::size_t line = 1, column = 0;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 0;
      } else {
        ++column;
      }
    }
    ++column;
    std::string reason = e.what();
    if (auto pos = reason.find(": "); pos != std::string::npos && reason.rfind("[json.exception", 0) == 0)
      reason = reason.substr(pos + 2);
    throw ConfigError("", fmt::format("{}: malformed JSON at line {}, column {}: {}", file, line, column, reason));
  }
}

ObjectReader::ObjectReader(const json& value, std::string path) : value_(&value), path_(std::move(path)) {
  if (value.is_null()) value_ = &empty_object();
  else if (!value.is_object())
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
  if (v == nullptr) throw ConfigError(path_of(key), "missing required key");
  return *v;
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
  throw ConfigError(path_of(key), fmt::format("unknown value \"{}\"; valid values are: {}", s, join_names(choices)));
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
                                        value.dump()));
  return d;
}

std::int64_t checked_integer(const json& value, const std::string& path, std::int64_t min, std::int64_t max) {
  bool integral = value.is_number_integer() || value.is_number_unsigned() ||
                  (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>() &&
                   std::fabs(value.get<double>()) < 9e15);
  if (!integral) throw ConfigError(path, fmt::format("expected an integer, got {}", json_type_name(value)));
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    throw ConfigError(path, fmt::format("expected an integer in [{}, {}], got {}", min, max, value.dump()));
  auto i = value.is_number_float() ? static_cast<std::int64_t>(value.get<double>()) : value.get<std::int64_t>();
  if (i < min || i > max)
    throw ConfigError(path, fmt::format("expected an integer in [{}, {}], got {}", min, max, value.dump()));
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
  if (v == nullptr) return fallback;
  double bw = units::bandwidth_Bps(*v, path_of(key));
  if (!(bw > 0)) throw ConfigError(path_of(key), fmt::format("bandwidth must be positive, got {}", v->dump()));
  return bw;
}

double ObjectReader::time_s(const std::string& key, double fallback) {
  const json* v = find(key);
  if (v == nullptr) return fallback;
  double t = units::time_s(*v, path_of(key));
  if (t < 0) throw ConfigError(path_of(key), fmt::format("time must not be negative, got {}", v->dump()));
  return t;
}

double ObjectReader::bytes(const std::string& key, double fallback) {
  const json* v = find(key);
  if (v == nullptr) return fallback;
  double b = units::bytes(*v, path_of(key));
  if (b < 0) throw ConfigError(path_of(key), fmt::format("size must not be negative, got {}", v->dump()));
  return b;
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
                        fmt::format("unknown key \"{}\"; valid keys are: {}", item.key(),
                                    valid.empty() ? std::string("(none)") : join_names(valid)));
    }
  }
}

}  // namespace ddlsim
