// Parsing quantities with units and their ranges (models/units.cpp); their rendering for tables is
// in units_format_test.cpp.
#include "models/units.hpp"

#include "models/error.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <stdexcept>

using namespace ddlsim;

TEST_CASE("bandwidth units: bits and bytes, decimal and binary") {
  CHECK(units::parse_bandwidth_Bps("25Gbps") == doctest::Approx(3.125e9));
  CHECK(units::parse_bandwidth_Bps("8bps") == doctest::Approx(1.0));
  CHECK(units::parse_bandwidth_Bps("1Kbps") == doctest::Approx(125.0));
  CHECK(units::parse_bandwidth_Bps("100Mbps") == doctest::Approx(12.5e6));
  CHECK(units::parse_bandwidth_Bps("1.6Tbps") == doctest::Approx(2e11));
  CHECK(units::parse_bandwidth_Bps("3.125GBps") == doctest::Approx(3.125e9));
  CHECK(units::parse_bandwidth_Bps("1Bps") == doctest::Approx(1.0));
  CHECK(units::parse_bandwidth_Bps("2KBps") == doctest::Approx(2000.0));
  CHECK(units::parse_bandwidth_Bps("2MBps") == doctest::Approx(2e6));
  CHECK(units::parse_bandwidth_Bps("1TBps") == doctest::Approx(1e12));
  CHECK(units::parse_bandwidth_Bps("1KiBps") == doctest::Approx(1024.0));
  CHECK(units::parse_bandwidth_Bps("1GiBps") == doctest::Approx(1073741824.0));
  CHECK(units::parse_bandwidth_Bps("10 Gbps") == doctest::Approx(1.25e9));  // as format_bandwidth writes it
  // A space around the quantity is a stray one (docs/reliability.md, "Ranges").
  CHECK_THROWS_WITH_AS(units::parse_bandwidth_Bps(" 10 Gbps "),
                       "\" 10 Gbps \" has a space at its start; a bandwidth is written without spaces around it: "
                       "\"10 Gbps\"",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(units::parse_bandwidth_Bps("5Gbps\t"),
                       "\"5Gbps\\t\" has a space at its end; a bandwidth is written without spaces around it: \"5Gbps\"",
                       std::invalid_argument);
  CHECK(units::parse_bandwidth_Bps("1e2Mbps") == doctest::Approx(12.5e6));
}

TEST_CASE("time units") {
  CHECK(units::parse_time_s("2us") == doctest::Approx(2e-6));
  CHECK(units::parse_time_s("5ns") == doctest::Approx(5e-9));
  CHECK(units::parse_time_s("1.5ms") == doctest::Approx(1.5e-3));
  CHECK(units::parse_time_s("3s") == doctest::Approx(3.0));
  CHECK(units::parse_time_s("0s") == 0.0);
}

TEST_CASE("byte units") {
  CHECK(units::parse_bytes("25MB") == doctest::Approx(25e6));
  CHECK(units::parse_bytes("25MiB") == doctest::Approx(26214400.0));
  CHECK(units::parse_bytes("1B") == 1.0);
  CHECK(units::parse_bytes("1KB") == 1000.0);
  CHECK(units::parse_bytes("1KiB") == 1024.0);
  CHECK(units::parse_bytes("2GB") == doctest::Approx(2e9));
  CHECK(units::parse_bytes("1GiB") == doctest::Approx(1073741824.0));
  CHECK(units::parse_bytes("1TB") == doctest::Approx(1e12));
  CHECK(units::parse_bytes("1TiB") == doctest::Approx(1099511627776.0));
}

TEST_CASE("unit errors are exact") {
  CHECK_THROWS_WITH_AS(units::parse_bandwidth_Bps("25"), "missing unit in \"25\"; expected one of bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps", std::invalid_argument);
  CHECK_THROWS_WITH_AS(units::parse_time_s("3 hours"), "unknown time unit \"hours\" in \"3 hours\"; expected one of ns, us, ms, s", std::invalid_argument);
  CHECK_THROWS_WITH_AS(units::parse_bytes("MB"), "expected a size in bytes: a number followed by one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, got \"MB\"", std::invalid_argument);
  CHECK_THROWS_WITH_AS(units::parse_bandwidth_Bps("10gbps"), "unknown bandwidth unit \"gbps\" in \"10gbps\"; expected one of bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps", std::invalid_argument);
}

TEST_CASE("JSON unit values name their path") {
  CHECK(units::time_s(nlohmann::json(0.5), "/x") == 0.5);
  CHECK(units::bytes(nlohmann::json(1024), "/x") == 1024.0);
  CHECK_THROWS_WITH_AS(units::bandwidth_Bps(nlohmann::json(10), "/platform/link/bandwidth"),
                       "/platform/link/bandwidth: expected a bandwidth string such as \"25Gbps\", got 10", ConfigError);
  CHECK_THROWS_WITH_AS(units::time_s(nlohmann::json("2 parsecs"), "/platform/link/latency"),
                       "/platform/link/latency: unknown time unit \"parsecs\" in \"2 parsecs\"; expected one of ns, us, ms, s",
                       ConfigError);
}

TEST_CASE("every quantity has a range, stated in the message") {
  using nlohmann::json;
  // At the edges: accepted.
  CHECK(units::bandwidth_Bps(json("1bps"), "/b") == units::MIN_BANDWIDTH_BPS);
  CHECK(units::bandwidth_Bps(json("1000TBps"), "/b") == units::MAX_BANDWIDTH_BPS);
  CHECK(units::time_s(json(units::MAX_TIME_S), "/t") == units::MAX_TIME_S);
  CHECK(units::time_s(json(units::MIN_POSITIVE_TIME_S), "/t") == units::MIN_POSITIVE_TIME_S);
  CHECK(units::time_s(json(0), "/t") == 0);
  CHECK(units::bytes(json(units::MAX_BYTES), "/m") == units::MAX_BYTES);
  // Beyond: refused, naming the range.
  CHECK_THROWS_WITH_AS(units::bandwidth_Bps(json("1e308Gbps"), "/b"),
                       "/b: bandwidth out of range: expected 1bps to 1000TBps, got \"1e308Gbps\"", ConfigError);
  CHECK_THROWS_WITH_AS(units::bandwidth_Bps(json("0.5bps"), "/b"),
                       "/b: bandwidth out of range: expected 1bps to 1000TBps, got \"0.5bps\"", ConfigError);
  CHECK_THROWS_WITH_AS(units::time_s(json("1e308s"), "/t"),
                       fmt::format("/t: time out of range: expected {}, got \"1e308s\"", units::time_range()).c_str(),
                       ConfigError);
  CHECK(units::time_range() == "0 or 1e-15 s to 1e+06 s");
  CHECK(units::time_range(units::MAX_LATENCY_S) == "0 or 1e-15 s to 1 s");
  CHECK_THROWS_WITH_AS(units::time_s(json(9223372036854775807LL), "/l", units::MAX_LATENCY_S),
                       "/l: time out of range: expected 0 or 1e-15 s to 1 s, got 9223372036854775807", ConfigError);
  CHECK_THROWS_WITH_AS(units::time_s(json(1e-320), "/t"),
                       "/t: time out of range: expected 0 or 1e-15 s to 1e+06 s, got 1e-320", ConfigError);
  CHECK_THROWS_WITH_AS(units::bytes(json(2e15), "/m"),
                       "/m: size out of range: expected 0 B to 1e+15 B, got 2e+15", ConfigError);
  CHECK_THROWS_WITH_AS(units::time_s(json("1e999s"), "/t"),
                       "/t: number out of range in \"1e999s\": it does not fit in a double", ConfigError);
  // The command line has the same ranges.
  CHECK_THROWS_WITH_AS(units::cli_latency_s("2", "--latency"),
                       "--latency: time out of range: expected 0 or 1e-15 s to 1 s, got \"2\"", ConfigError);
  CHECK(units::cli_time_s("2", "--t") == 2.0);
  CHECK_THROWS_WITH_AS(units::cli_bytes("1e16", "--bytes"),
                       "--bytes: size out of range: expected 0 B to 1e+15 B, got \"1e16\"", ConfigError);
  CHECK_THROWS_WITH_AS(units::cli_bandwidth_Bps("1e20TBps", "--bandwidth"),
                       "--bandwidth: bandwidth out of range: expected 1bps to 1000TBps, got \"1e20TBps\"", ConfigError);
}
