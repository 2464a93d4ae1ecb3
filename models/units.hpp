// ddlsim: the one parser for quantities with units.
//
//   bandwidth: bps, Kbps, Mbps, Gbps, Tbps (bits/s, powers of 1000),
//              Bps, KBps, MBps, GBps, TBps (bytes/s, powers of 1000),
//              KiBps, MiBps, GiBps, TiBps (bytes/s, powers of 1024)      -> bytes per second
//   time:      ns, us, ms, s                                             -> seconds
//   bytes:     B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB    -> bytes
//
// A value is a decimal number (optionally with exponent) immediately or after
// spaces followed by the unit; unit matching is case-sensitive because "Mb"
// and "MB" differ by a factor of 8. Errors are ConfigError with the given path.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ddlsim::units {

/// Parses "25Gbps" -> 3.125e9 (bytes per second). Throws std::invalid_argument on bad text.
double parse_bandwidth_Bps(std::string_view text);
/// Parses "2us" -> 2e-6 (seconds).
double parse_time_s(std::string_view text);
/// Parses "25MiB" -> 26214400 (bytes).
double parse_bytes(std::string_view text);

/// JSON-aware versions used by the scenario loader. Strings are parsed with the
/// functions above; a bare JSON number is accepted for time (seconds) and bytes
/// (bytes) but not for bandwidth, whose bits/bytes ambiguity must be spelled out.
/// Errors are ConfigError naming `path`.
double bandwidth_Bps(const nlohmann::json& value, const std::string& path);
double time_s(const nlohmann::json& value, const std::string& path);
double bytes(const nlohmann::json& value, const std::string& path);

/// Command-line versions: `text` is what the user typed after an option named
/// `path` (e.g. "--bytes"). A bare number means bytes for a size and seconds for
/// a time, as a bare JSON number does in a scenario (and as in nccl-tests, where
/// -b 1048576 is 1 MiB); a bare number for a bandwidth is refused, since bits and
/// bytes per second differ by 8. Sizes and times must not be negative and a
/// bandwidth must be positive. Errors are ConfigError naming `path`.
double cli_bytes(const std::string& text, const std::string& path);
double cli_time_s(const std::string& text, const std::string& path);
double cli_bandwidth_Bps(const std::string& text, const std::string& path);

/// Human-readable renderings used in tables ("25 Gbps", "2 us", "25 MB").
std::string format_bandwidth(double bytes_per_s);
std::string format_time(double seconds);
std::string format_bytes(double bytes);

}  // namespace ddlsim::units
