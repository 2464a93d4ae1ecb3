// Quantities as text for people (models/units_format.cpp): four significant digits and the largest
// unit that keeps the number >= 1 (bandwidth in bits per second, powers of 1000), each rendering
// read back by the parser (models/units.cpp) to the value within the four digits.
#include "models/units.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <string>

using namespace ddlsim;

TEST_CASE("formatting for tables") {
  CHECK(units::format_bandwidth(3.125e9) == "25 Gbps");
  CHECK(units::format_time(2e-6) == "2 us");
  CHECK(units::format_bytes(25e6) == "25 MB");
}

TEST_CASE("formatting: the unit changes at each power of 1000, with four significant digits") {
  // Bandwidth: bytes per second x 8 bits.
  CHECK(units::format_bandwidth(124.875) == "999 bps");   // 999 bits/s
  CHECK(units::format_bandwidth(125) == "1 Kbps");        // 1000 bits/s
  CHECK(units::format_bandwidth(125e3) == "1 Mbps");
  CHECK(units::format_bandwidth(125e6) == "1 Gbps");
  CHECK(units::format_bandwidth(125e9) == "1 Tbps");
  CHECK(units::format_bandwidth(125e12) == "1000 Tbps");  // no larger unit
  CHECK(units::format_bandwidth(1.25e9 / 3) == "3.333 Gbps");
  CHECK(units::format_bandwidth(0) == "0 bps");
  // Time, by magnitude, sign kept.
  CHECK(units::format_time(0) == "0 s");
  CHECK(units::format_time(999e-9) == "999 ns");
  CHECK(units::format_time(1e-6) == "1 us");
  CHECK(units::format_time(1e-3) == "1 ms");
  CHECK(units::format_time(1) == "1 s");
  CHECK(units::format_time(-2.5e-3) == "-2.5 ms");
  CHECK(units::format_time(1.0 / 3) == "333.3 ms");
  CHECK(units::format_time(86400) == "8.64e+04 s");  // four digits: a day in exponent form
  // Bytes, powers of 1000.
  CHECK(units::format_bytes(999) == "999 B");
  CHECK(units::format_bytes(1000) == "1 KB");
  CHECK(units::format_bytes(1e6) == "1 MB");
  CHECK(units::format_bytes(1e9) == "1 GB");
  CHECK(units::format_bytes(1.5e12) == "1.5 TB");
  CHECK(units::format_bytes(123456789) == "123.5 MB");
}

TEST_CASE("formatting: what is written reads back within four significant digits") {
  for (const double bps : {1.0, 777.0, 3.125e9, 1.23456e11, 9.99e14}) {
    CAPTURE(bps);
    CHECK(units::parse_bandwidth_Bps(units::format_bandwidth(bps)) == doctest::Approx(bps).epsilon(5e-4));
  }
  for (const double s : {2e-9, 3.3e-5, 0.125, 42.0}) {
    CAPTURE(s);
    CHECK(units::parse_time_s(units::format_time(s)) == doctest::Approx(s).epsilon(5e-4));
  }
  for (const double b : {1.0, 4096.0, 26214400.0, 7.5e11}) {
    CAPTURE(b);
    CHECK(units::parse_bytes(units::format_bytes(b)) == doctest::Approx(b).epsilon(5e-4));
  }
}
