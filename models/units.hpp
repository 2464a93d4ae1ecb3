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
//
// Every quantity read from JSON or the command line is checked against its
// range below (docs/reliability.md, "Ranges"): wide enough for any real system,
// narrow enough that the sums and products of a whole run stay finite and that
// the engine (SimGrid, which reads trace values back from text and counts bytes
// in 64-bit integers) never sees a value it cannot represent.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ddlsim::units {

inline constexpr double MIN_BANDWIDTH_BPS = 0.125;  // bytes/s: 1 bit/s
inline constexpr double MAX_BANDWIDTH_BPS = 1e15;   // bytes/s: 1000 TBps, 8000 Tbps
inline constexpr double MAX_TIME_S = 1e6;           // one compute phase, cost, period or trace time (11.6 days)
inline constexpr double MAX_LATENCY_S = 1.0;        // one link's latency, one message's or one call's fixed cost
inline constexpr double MIN_POSITIVE_TIME_S = 1e-15;  // a time is 0 or at least this (1 fs): no subnormals
inline constexpr double MAX_BYTES = 1e15;           // 1 PB: one size, and a workload's whole gradient

/// Parses "25Gbps" -> 3.125e9 (bytes per second). Throws std::invalid_argument on bad text.
double parse_bandwidth_Bps(std::string_view text);
/// Parses "2us" -> 2e-6 (seconds).
double parse_time_s(std::string_view text);
/// Parses "25MiB" -> 26214400 (bytes).
double parse_bytes(std::string_view text);

/// JSON-aware versions used by the scenario loader. Strings are parsed with the
/// functions above; a bare JSON number is accepted for time (seconds) and bytes
/// (bytes) but not for bandwidth, whose bits/bytes ambiguity must be spelled out.
/// Each value is checked against its range: a bandwidth in [MIN_BANDWIDTH_BPS,
/// MAX_BANDWIDTH_BPS], a time 0 or in [MIN_POSITIVE_TIME_S, `max_s`], a size in
/// [0, MAX_BYTES]. Errors are ConfigError naming `path`.
double bandwidth_Bps(const nlohmann::json& value, const std::string& path);
double time_s(const nlohmann::json& value, const std::string& path, double max_s = MAX_TIME_S);
double bytes(const nlohmann::json& value, const std::string& path);

/// Command-line versions: `text` is what the user typed after an option named
/// `path` (e.g. "--bytes"). A bare number means bytes for a size and seconds for
/// a time, as a bare JSON number does in a scenario (and as in nccl-tests, where
/// -b 1048576 is 1 MiB); a bare number for a bandwidth is refused, since bits and
/// bytes per second differ by 8. The ranges are the JSON versions'. Errors are
/// ConfigError naming `path`.
double cli_bytes(const std::string& text, const std::string& path);
double cli_time_s(const std::string& text, const std::string& path);
/// A time at most MAX_LATENCY_S: a link's latency.
double cli_latency_s(const std::string& text, const std::string& path);
double cli_bandwidth_Bps(const std::string& text, const std::string& path);

/// The range a time, a size or a bandwidth must lie in, as messages state it
/// ("0 or 1e-15 s to 1e+06 s", "0 B to 1e+15 B", "1bps to 1000TBps").
std::string time_range(double max_s = MAX_TIME_S);
std::string bytes_range();
std::string bandwidth_range();

/// Human-readable renderings used in tables ("25 Gbps", "2 us", "25 MB").
std::string format_bandwidth(double bytes_per_s);
std::string format_time(double seconds);
std::string format_bytes(double bytes);

}  // namespace ddlsim::units
