// ddlsim: quantities as text for people (models/units.hpp: format_bandwidth, format_time,
// format_bytes): four significant digits and the largest unit that keeps the number >= 1.
#include "models/units.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ddlsim::units {
namespace {

std::string trim_number(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

std::string format_bandwidth(double bytes_per_s) {
  double bits = bytes_per_s * 8;
  if (bits >= 1e12) return trim_number(bits / 1e12) + " Tbps";
  if (bits >= 1e9) return trim_number(bits / 1e9) + " Gbps";
  if (bits >= 1e6) return trim_number(bits / 1e6) + " Mbps";
  if (bits >= 1e3) return trim_number(bits / 1e3) + " Kbps";
  return trim_number(bits) + " bps";
}

std::string format_time(double seconds) {
  double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-6) return trim_number(seconds * 1e9) + " ns";
  if (a < 1e-3) return trim_number(seconds * 1e6) + " us";
  if (a < 1) return trim_number(seconds * 1e3) + " ms";
  return trim_number(seconds) + " s";
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e12) return trim_number(bytes / 1e12) + " TB";
  if (bytes >= 1e9) return trim_number(bytes / 1e9) + " GB";
  if (bytes >= 1e6) return trim_number(bytes / 1e6) + " MB";
  if (bytes >= 1e3) return trim_number(bytes / 1e3) + " KB";
  return trim_number(bytes) + " B";
}

}  // namespace ddlsim::units
