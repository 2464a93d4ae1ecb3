// ddlsim: "network.link_traces" (docs/scenario.md): time-varying bandwidth and latency, replayed by
// SimGrid profiles at flow fidelity and by scenario/analytic_network.cpp's segments.
//
// Besides each value's range (models/units.hpp), a repeating trace's period must exceed its last
// time stamp (SimGrid repeats entry (t, v) at t + k x period, so a shorter period would make time run
// backwards) and be at least MIN_TRACE_PERIOD_S: every period replays every entry as an engine event.
#include "scenario/scenario.hpp"

#include "models/units.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>
#include <set>

namespace ddlsim::sim {
namespace {

std::vector<std::pair<double, double>> read_series(const json& value, const std::string& path, bool bandwidth) {
  if (!value.is_array() || value.empty())
    throw ConfigError(path, fmt::format("expected a non-empty array of [t_s, value] pairs, got {}", json_type_name(value)));
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string p = fmt::format("{}/{}", path, i);
    const json& pair = value[i];
    if (!pair.is_array() || pair.size() != 2)
      throw ConfigError(p, fmt::format("expected a [t_s, value] pair, got {}", value_text(pair)));
    if (!pair[0].is_number())
      throw ConfigError(p + "/0", fmt::format("expected a time in seconds (a number), got {}", json_type_name(pair[0])));
    const double t = units::time_s(pair[0], p + "/0");
    if (!out.empty() && t <= out.back().first)
      throw ConfigError(p + "/0", fmt::format("times must increase, got {:g} after {:g}", t, out.back().first));
    const double v = bandwidth ? units::bandwidth_Bps(pair[1], p + "/1")
                               : units::time_s(pair[1], p + "/1", units::MAX_LATENCY_S);
    out.emplace_back(t, v);
  }
  return out;
}

}  // namespace

std::vector<LinkTrace> read_link_traces(const json& value, const std::string& path, const platforms::Topology& topo) {
  if (!value.is_array()) throw ConfigError(path, fmt::format("expected an array, got {}", json_type_name(value)));
  std::set<std::string> names;
  for (auto e : boost::make_iterator_range(boost::edges(topo.graph))) names.insert(topo.graph[e].name);
  std::vector<LinkTrace> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    ObjectReader r(value[i], fmt::format("{}/{}", path, i));
    LinkTrace trace;
    if (const json* links = r.find("links")) {
      if (!links->is_array()) throw ConfigError(r.path_of("links"), fmt::format("expected an array of link names, got {}", json_type_name(*links)));
      for (std::size_t k = 0; k < links->size(); ++k) {
        const std::string p = fmt::format("{}/{}", r.path_of("links"), k);
        if (!(*links)[k].is_string()) throw ConfigError(p, fmt::format("expected a link name, got {}", json_type_name((*links)[k])));
        const auto name = (*links)[k].get<std::string>();
        if (names.count(name) == 0)
          throw ConfigError(p, fmt::format("unknown link \"{}\"; `ddlsim platform SCENARIO --dot FILE` shows every link name",
                                           excerpt(name)));
        trace.links.push_back(name);
      }
    }
    if (const json* bw = r.find("bandwidth")) trace.bandwidth_Bps = read_series(*bw, r.path_of("bandwidth"), true);
    if (const json* lat = r.find("latency")) trace.latency_s = read_series(*lat, r.path_of("latency"), false);
    const bool periodic = r.has("period");
    trace.period_s = periodic ? r.time_s("period", -1) : -1;
    r.finish();  // a misspelt key is named before the checks below miss what it meant to give
    if (trace.bandwidth_Bps.empty() && trace.latency_s.empty())
      throw ConfigError(r.path(), "a link trace needs \"bandwidth\" or \"latency\"");
    if (periodic) {
      double last = 0;
      for (const auto* series : {&trace.bandwidth_Bps, &trace.latency_s})
        if (!series->empty()) last = std::max(last, series->back().first);
      if (!(trace.period_s > last))
        throw ConfigError(r.path_of("period"),
                          fmt::format("the period must be longer than the trace's last time ({:g} s), got {:g} s", last,
                                      trace.period_s));
      if (trace.period_s < MIN_TRACE_PERIOD_S)
        throw ConfigError(r.path_of("period"),
                          fmt::format("a period must be at least {:g} s (every period replays each entry as an engine "
                                      "event), got {:g} s",
                                      MIN_TRACE_PERIOD_S, trace.period_s));
    }
    out.push_back(std::move(trace));
  }
  return out;
}

LinkTraceOf link_trace_of(const std::vector<LinkTrace>& traces, const std::string& link_name) {
  LinkTraceOf of;
  for (const auto& trace : traces) {
    if (!trace.links.empty() && std::find(trace.links.begin(), trace.links.end(), link_name) == trace.links.end())
      continue;
    if (!trace.bandwidth_Bps.empty()) of.bandwidth = &trace;
    if (!trace.latency_s.empty()) of.latency = &trace;
  }
  return of;
}

}  // namespace ddlsim::sim
