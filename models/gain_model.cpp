#include "models/gain_model.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::models {
namespace {

double curve(const GainModel::Checkpoint& c, double ratio) { return std::min(1.0, c.a * std::pow(ratio, c.b)); }

}  // namespace

GainModel GainModel::read(const json& doc, const std::string& path) {
  ObjectReader root(doc, path);
  GainModel m;
  m.source = root.required_string("source");
  m.model = root.string("model", "");
  (void)root.string("method", "");
  (void)root.string("curve", "");
  (void)root.string("measured_on", "");
  const json& cps = root.require("checkpoints");
  const std::string cps_path = root.path_of("checkpoints");
  if (!cps.is_array() || cps.empty())
    throw ConfigError(cps_path, fmt::format("expected a non-empty array of checkpoints, got {}", json_type_name(cps)));
  for (std::size_t i = 0; i < cps.size(); ++i) {
    ObjectReader c(cps[i], fmt::format("{}/{}", cps_path, i));
    Checkpoint cp;
    cp.step = c.number("step", 0, 0, 1e12);
    cp.a = c.number("a", 1, std::numeric_limits<double>::min(), 1e6);
    cp.b = c.number("b", 0, 0, 10);
    (void)c.number("max_fit_error", 0, 0, 1e12);
    if (const json* measured = c.find("measured")) {
      const std::string mp = c.path_of("measured");
      if (!measured->is_array()) throw ConfigError(mp, fmt::format("expected an array of [ratio, gain], got {}", json_type_name(*measured)));
      for (std::size_t k = 0; k < measured->size(); ++k) {
        const json& pair = (*measured)[k];
        const std::string pp = fmt::format("{}/{}", mp, k);
        if (!pair.is_array() || pair.size() != 2) throw ConfigError(pp, "expected [ratio, gain]");
        cp.measured.emplace_back(checked_number(pair[0], pp + "/0", 0, 1), checked_number(pair[1], pp + "/1", 0, 1));
      }
    }
    c.finish();
    if (!m.checkpoints_.empty() && cp.step <= m.checkpoints_.back().step)
      throw ConfigError(c.path_of("step"), fmt::format("checkpoint steps must increase: {} after {}", cp.step,
                                                       m.checkpoints_.back().step));
    m.checkpoints_.push_back(std::move(cp));
  }
  root.finish();
  return m;
}

GainModel GainModel::load(const std::string& file, const std::string& ref_path) {
  return load_referenced(file, "gain model", ref_path, [](const json& doc) { return read(doc, ""); });
}

double GainModel::gain(double ratio, double step) const {
  const auto& cps = checkpoints_;
  if (step <= cps.front().step) return curve(cps.front(), ratio);
  if (step >= cps.back().step) return curve(cps.back(), ratio);
  const auto next = std::upper_bound(cps.begin(), cps.end(), step,
                                     [](double s, const Checkpoint& c) { return s < c.step; });
  const auto& hi = *next;
  const auto& lo = *(next - 1);
  const double w = (step - lo.step) / (hi.step - lo.step);
  return (1 - w) * curve(lo, ratio) + w * curve(hi, ratio);
}

}  // namespace ddlsim::models
