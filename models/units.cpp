#include "models/units.hpp"

#include "models/error.hpp"
#include "models/json_reader.hpp"

#include <array>
#include <cmath>
#include <charconv>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>
#include <utility>

namespace ddlsim::units {
namespace {

struct Unit {
  std::string_view name;
  double factor;
};

constexpr std::array BANDWIDTH_UNITS{
    Unit{"bps", 1.0 / 8},       Unit{"Kbps", 1e3 / 8},  Unit{"Mbps", 1e6 / 8},  Unit{"Gbps", 1e9 / 8},
    Unit{"Tbps", 1e12 / 8},     Unit{"Bps", 1.0},       Unit{"KBps", 1e3},      Unit{"MBps", 1e6},
    Unit{"GBps", 1e9},          Unit{"TBps", 1e12},     Unit{"KiBps", 1024.0},  Unit{"MiBps", 1048576.0},
    Unit{"GiBps", 1073741824.0}, Unit{"TiBps", 1099511627776.0}};
constexpr std::array TIME_UNITS{Unit{"ns", 1e-9}, Unit{"us", 1e-6}, Unit{"ms", 1e-3}, Unit{"s", 1.0}};
constexpr std::array BYTE_UNITS{Unit{"B", 1.0},           Unit{"KB", 1e3},          Unit{"MB", 1e6},
                                Unit{"GB", 1e9},          Unit{"TB", 1e12},         Unit{"KiB", 1024.0},
                                Unit{"MiB", 1048576.0},   Unit{"GiB", 1073741824.0}, Unit{"TiB", 1099511627776.0}};

template <std::size_t N>
std::string unit_list(const std::array<Unit, N>& units) {
  std::string out;
  for (const auto& u : units) out += (out.empty() ? "" : ", ") + std::string(u.name);
  return out;
}

bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/// A quantity starts with its number and ends with its unit (a space between them is fine: the
/// formatted quantities have one): a space around it is most often a stray one, and refused.
void refuse_stray_space(std::string_view text, std::string_view what) {
  if (text.empty() || (!is_space(text.front()) && !is_space(text.back()))) return;
  std::string_view inner = text;
  while (!inner.empty() && is_space(inner.front())) inner.remove_prefix(1);
  while (!inner.empty() && is_space(inner.back())) inner.remove_suffix(1);
  throw std::invalid_argument(fmt::format("\"{}\" has a space at its {}; a {} is written without spaces around it{}",
                                          excerpt(text), is_space(text.front()) ? "start" : "end", what,
                                          inner.empty() ? std::string() : fmt::format(": \"{}\"", excerpt(inner))));
}

template <std::size_t N>
double parse(std::string_view text, const std::array<Unit, N>& units, std::string_view what) {
  refuse_stray_space(text, what);
  auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    return s;
  };
  std::string_view s = text;
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range)
    throw std::invalid_argument(fmt::format("number out of range in \"{}\": it does not fit in a double", excerpt(text)));
  if (ec != std::errc() || ptr == s.data())
    throw std::invalid_argument(fmt::format("expected a {}: a number followed by one of {}, got \"{}\"", what,
                                            unit_list(units), excerpt(text)));
  std::string_view unit = trim(s.substr(static_cast<std::size_t>(ptr - s.data())));
  if (unit.empty())
    throw std::invalid_argument(
        fmt::format("missing unit in \"{}\"; expected one of {}", excerpt(text), unit_list(units)));
  for (const auto& u : units)
    if (u.name == unit) {
      if (!std::isfinite(value)) throw std::invalid_argument(fmt::format("\"{}\" is not a finite {}", excerpt(text), what));
      return value * u.factor;
    }
  throw std::invalid_argument(fmt::format("unknown {} unit \"{}\" in \"{}\"; expected one of {}", what, excerpt(unit),
                                          excerpt(text), unit_list(units)));
}

enum class Kind { BANDWIDTH, TIME, BYTES };

/// Checks `value` (shown as `shown`, already quoted as the user wrote it) against its range.
double in_range(double value, const std::string& shown, const std::string& path, Kind kind, double max_s) {
  switch (kind) {
    case Kind::BANDWIDTH:
      if (!(value > 0)) throw ConfigError(path, fmt::format("bandwidth must be positive, got {}", shown));
      if (value < MIN_BANDWIDTH_BPS || value > MAX_BANDWIDTH_BPS)
        throw ConfigError(path, fmt::format("bandwidth out of range: expected {}, got {}", bandwidth_range(), shown));
      return value;
    case Kind::TIME:
      if (value < 0) throw ConfigError(path, fmt::format("time must not be negative, got {}", shown));
      if (!std::isfinite(value) || value > max_s || (value > 0 && value < MIN_POSITIVE_TIME_S))
        throw ConfigError(path, fmt::format("time out of range: expected {}, got {}", time_range(max_s), shown));
      return value;
    case Kind::BYTES:
      if (value < 0) throw ConfigError(path, fmt::format("size must not be negative, got {}", shown));
      if (!std::isfinite(value) || value > MAX_BYTES)
        throw ConfigError(path, fmt::format("size out of range: expected {}, got {}", bytes_range(), shown));
      return value;
  }
  return value;
}

template <class Parser>
double from_json(const nlohmann::json& value, const std::string& path, std::string_view what, bool allow_number,
                 std::string_view example, Parser parser, Kind kind, double max_s = MAX_TIME_S) {
  const std::string shown = value_text(value);
  if (value.is_number() && allow_number) return in_range(value.get<double>(), shown, path, kind, max_s);
  if (!value.is_string())
    throw ConfigError(path, fmt::format("expected a {} string such as \"{}\"{}, got {}", what, example,
                                        allow_number ? " (or a plain number)" : "", shown));
  double parsed = 0;
  try {
    parsed = parser(value.get_ref<const std::string&>());
  } catch (const std::invalid_argument& e) {
    throw ConfigError(path, e.what());
  }
  return in_range(parsed, shown, path, kind, max_s);
}

}  // namespace

double parse_bandwidth_Bps(std::string_view text) { return parse(text, BANDWIDTH_UNITS, "bandwidth"); }
double parse_time_s(std::string_view text) { return parse(text, TIME_UNITS, "time"); }
double parse_bytes(std::string_view text) { return parse(text, BYTE_UNITS, "size in bytes"); }

double bandwidth_Bps(const nlohmann::json& value, const std::string& path) {
  return from_json(value, path, "bandwidth", false, "25Gbps", parse_bandwidth_Bps, Kind::BANDWIDTH);
}
double time_s(const nlohmann::json& value, const std::string& path, double max_s) {
  return from_json(value, path, "time", true, "2us", parse_time_s, Kind::TIME, max_s);
}
double bytes(const nlohmann::json& value, const std::string& path) {
  return from_json(value, path, "size", true, "25MB", parse_bytes, Kind::BYTES);
}

std::string time_range(double max_s) { return fmt::format("0 or {:g} s to {:g} s", MIN_POSITIVE_TIME_S, max_s); }
std::string bytes_range() { return fmt::format("0 B to {:g} B", MAX_BYTES); }
std::string bandwidth_range() { return "1bps to 1000TBps"; }

namespace {

/// The value of `text` if it is a bare number (no spaces around it: refuse_stray_space), else nothing.
std::optional<double> bare_number(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

/// `text` as a bare number in range, or through the JSON version (which parses its unit).
double cli_value(const std::string& text, const std::string& path, Kind kind, double max_s) {
  const std::string shown = fmt::format("\"{}\"", excerpt(text));
  const auto bare = bare_number(text);
  if (!bare) {
    const nlohmann::json value(text);
    return kind == Kind::TIME ? time_s(value, path, max_s) : bytes(value, path);
  }
  if (!std::isfinite(*bare))
    throw ConfigError(path, fmt::format("{} is not a finite {}", shown, kind == Kind::TIME ? "time" : "size"));
  return in_range(*bare, shown, path, kind, max_s);
}

}  // namespace

double cli_bytes(const std::string& text, const std::string& path) {
  return cli_value(text, path, Kind::BYTES, MAX_TIME_S);
}

double cli_time_s(const std::string& text, const std::string& path) {
  return cli_value(text, path, Kind::TIME, MAX_TIME_S);
}

double cli_latency_s(const std::string& text, const std::string& path) {
  return cli_value(text, path, Kind::TIME, MAX_LATENCY_S);
}

double cli_bandwidth_Bps(const std::string& text, const std::string& path) {
  if (bare_number(text))
    throw ConfigError(path, fmt::format("\"{}\" has no unit; a bandwidth needs one because bits and bytes per second "
                                        "differ by 8: e.g. 25Gbps (bits) or 3.125GBps (bytes); units: {}",
                                        excerpt(text), unit_list(BANDWIDTH_UNITS)));
  return bandwidth_Bps(nlohmann::json(text), path);
}

}  // namespace ddlsim::units
