// ddlsim: --holdout and --select row rules (analysis/row_rules.hpp).
#include "analysis/row_rules.hpp"

#include "models/error.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <sstream>
#include <vector>

namespace ddlsim::analysis {
namespace {

bool same(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

std::function<bool(const Measurement&, std::size_t)> row_rule(const std::string& spec, const std::string& path) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw ConfigError(path, fmt::format("expected COLUMN=VALUE[,VALUE...] or every=K, got \"{}\"", spec));
  const std::string column = spec.substr(0, eq);
  std::vector<std::string> values;
  std::stringstream in(spec.substr(eq + 1));
  for (std::string v; std::getline(in, v, ',');)
    if (!v.empty()) values.push_back(v);
  if (values.empty()) throw ConfigError(path, fmt::format("no value after \"{}=\"", column));
  if (column == "every" && path == "--holdout") {
    const double k = units::cli_bytes(values[0], path);  // a bare count
    if (values.size() != 1 || k < 2 || k != std::floor(k) || k > 1e9)
      throw ConfigError(path, fmt::format("every=K needs one integer K >= 2, got \"{}\"", spec.substr(eq + 1)));
    const auto kk = static_cast<std::size_t>(k);
    return [kk](const Measurement&, std::size_t index) { return index % kk == kk - 1; };
  }
  using Get = std::function<double(const Measurement&)>;
  auto numeric = [&](Get get, std::function<double(const std::string&)> parse) {
    std::vector<double> wanted;
    for (const auto& v : values) wanted.push_back(parse(v));
    return [get, wanted](const Measurement& m, std::size_t) {
      const double x = get(m);
      return std::any_of(wanted.begin(), wanted.end(), [x](double w) { return same(x, w); });
    };
  };
  auto text = [&](std::function<std::string(const Measurement&)> get) {
    return [get, values](const Measurement& m, std::size_t) {
      return std::find(values.begin(), values.end(), get(m)) != values.end();
    };
  };
  auto bare_or = [&path](std::function<double(const std::string&, const std::string&)> with_units) {
    return [with_units, path](const std::string& v) {
      char* end = nullptr;
      const double bare = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && *end == '\0' && std::isfinite(bare)) return bare;
      return with_units(v, path);
    };
  };
  if (column == "op") return text([](const Measurement& m) { return m.op; });
  if (column == "algorithm") return text([](const Measurement& m) { return m.algorithm; });
  if (column == "backend") return text([](const Measurement& m) { return m.backend; });
  if (column == "source") return text([](const Measurement& m) { return m.source; });
  if (column == "ranks") return numeric([](const Measurement& m) { return m.ranks; }, bare_or(units::cli_bytes));
  if (column == "servers") return numeric([](const Measurement& m) { return m.servers; }, bare_or(units::cli_bytes));
  if (column == "bytes") return numeric([](const Measurement& m) { return m.bytes; }, bare_or(units::cli_bytes));
  if (column == "latency_s")
    return numeric([](const Measurement& m) { return m.latency_s.value_or(-1); }, bare_or(units::cli_time_s));
  if (column == "bandwidth_bps")
    return numeric([](const Measurement& m) { return m.bandwidth_Bps ? *m.bandwidth_Bps * 8 : -1; },
                   bare_or([](const std::string& v, const std::string& p) { return units::cli_bandwidth_Bps(v, p) * 8; }));
  throw ConfigError(path, fmt::format("unknown column \"{}\"; valid are: op, algorithm, ranks, servers, bytes, backend, "
                                      "bandwidth_bps, latency_s, source{}",
                                      column, path == "--holdout" ? ", every" : ""));
}

}  // namespace ddlsim::analysis
