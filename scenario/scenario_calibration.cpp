// ddlsim: network.calibration -- a scenario's network settings from `ddlsim calibrate`'s snippet
// (docs/scenario.md, "network"; docs/validation.md, "Calibration").
//
// The snippet {"format": "ddlsim-calibration", "version": 1, "network": {...}, "fit": {...}} carries
// model ("calibrated"), latency_factor, bandwidth_factor, software and collective_call_cost. They
// are merged into the scenario's network object, which may not set any of them itself (a model of
// "calibrated" excepted), and are then read like the scenario's own; an error in one of them names
// the calibration file and the value's path inside it.
#include "scenario/scenario.hpp"

#include <fmt/format.h>

namespace ddlsim::sim {
namespace {

const std::vector<std::string> SNIPPET_KEYS{"model", "latency_factor", "bandwidth_factor", "software",
                                            "collective_call_cost"};

/// fit.range: each of bytes, bandwidth_bps, latency_s and ranks an array [min, max] (absent from
/// snippets written before it: nullopt).
std::optional<CalibrationRange> read_range(ObjectReader& r) {
  const json* fit = r.find("fit");
  if (fit == nullptr || !fit->is_object() || !fit->contains("range")) return std::nullopt;
  const json& range = fit->at("range");
  auto pair = [&range](const char* key) {
    const std::string path = fmt::format("/fit/range/{}", key);
    if (!range.is_object() || !range.contains(key))
      throw ConfigError(path, "expected [min, max] (ddlsim calibrate writes it)");
    const json& v = range.at(key);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() || v[0].get<double>() > v[1].get<double>())
      throw ConfigError(path, fmt::format("expected [min, max] with min <= max, got {}", v.dump()));
    return std::pair{v[0].get<double>(), v[1].get<double>()};
  };
  CalibrationRange out;
  std::tie(out.min_bytes, out.max_bytes) = pair("bytes");
  const auto [lo_bps, hi_bps] = pair("bandwidth_bps");
  out.min_bandwidth_Bps = lo_bps / 8, out.max_bandwidth_Bps = hi_bps / 8;
  std::tie(out.min_latency_s, out.max_latency_s) = pair("latency_s");
  const auto [lo_n, hi_n] = pair("ranks");
  out.min_ranks = static_cast<int>(lo_n), out.max_ranks = static_cast<int>(hi_n);
  return out;
}

struct Snippet {
  json network;
  std::optional<CalibrationRange> range;
};

Snippet read_snippet(const json& doc) {
  ObjectReader r(doc, "");
  if (r.required_string("format") != "ddlsim-calibration")
    throw ConfigError("/format", fmt::format("expected \"ddlsim-calibration\" (a file written by ddlsim calibrate), "
                                             "got {}", doc.at("format").dump()));
  (void)r.integer("version", 1, 1, 1);
  ObjectReader n = r.object("network");
  json network = json::object();
  for (const auto& key : SNIPPET_KEYS)
    if (const json* v = n.find(key)) network[key] = *v;
  n.finish();
  if (network.value("model", "") != "calibrated")
    throw ConfigError("/network/model", fmt::format("expected \"calibrated\", got {}",
                                                    network.contains("model") ? network["model"].dump() : "nothing"));
  auto range = read_range(r);  // the rest of "fit" is the report of the fit, for people
  r.finish();
  return Snippet{network, range};
}

}  // namespace

CalibratedNetwork apply_calibration(const json* network, const std::string& base_dir) {
  CalibratedNetwork out;
  out.network = network == nullptr || network->is_null() ? json::object() : *network;
  if (!out.network.is_object() || !out.network.contains("calibration")) return out;
  const std::string path = "/network/calibration";
  const json& ref = out.network["calibration"];
  if (!ref.is_string() || ref.get<std::string>().empty())
    throw ConfigError(path, fmt::format("expected the file name of a calibration (ddlsim calibrate --out), got {}",
                                        ref.is_string() ? "an empty string" : json_type_name(ref)));
  out.file = resolve_beside(ref.get<std::string>(), base_dir);
  const Snippet snippet = load_referenced(out.file, "calibration", path, read_snippet);
  out.range = snippet.range;
  out.network.erase("calibration");
  for (const auto& [key, value] : snippet.network.items()) {
    if (out.network.contains(key) && !(key == "model" && out.network[key] == value))
      throw ConfigError(pointer_append("/network", key),
                        fmt::format("also set by the calibration \"{}\" ({}); remove one", out.file, path));
    out.network[key] = value;
    out.keys.insert(key);
  }
  return out;
}

ConfigError calibration_error(const ConfigError& e, const CalibratedNetwork& calibration) {
  for (const auto& key : calibration.keys) {
    const std::string prefix = pointer_append("/network", key);
    if (e.path() == prefix || e.path().rfind(prefix + "/", 0) == 0)
      return ConfigError("/network/calibration", fmt::format("in calibration \"{}\": {}", calibration.file, e.what()));
  }
  return e;
}

}  // namespace ddlsim::sim
