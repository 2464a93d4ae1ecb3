#include "scenario/analytic_network.hpp"

#include "scenario/collective_group.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <queue>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace ddlsim::sim {
namespace {

constexpr double NEVER = std::numeric_limits<double>::infinity();

/// The value of a traced property at `t`, or `nominal` before the trace's first entry.
double value_at(const std::vector<std::pair<double, double>>& series, double period_s, double nominal, double t) {
  const double first = series.front().first;
  if (t < first) return nominal;
  double local = t;
  if (period_s > 0) {
    local = t - std::floor((t - first) / period_s) * period_s;  // in [first, first + P), up to rounding
    if (local < first) local += period_s;
    if (local >= first + period_s) local -= period_s;
  }
  auto it = std::upper_bound(series.begin(), series.end(), local,
                             [](double x, const std::pair<double, double>& e) { return x < e.first; });
  return it == series.begin() ? series.front().second : std::prev(it)->second;
}

/// The first entry time of a (periodic) series strictly after `t`.
double next_entry(const std::vector<std::pair<double, double>>& series, double period_s, double t) {
  const double first = series.front().first;
  if (t < first) return first;
  if (period_s <= 0) {
    for (const auto& [time, value] : series)
      if (time > t) return time;
    return NEVER;
  }
  // The cycle holding t, from a rounded quotient that can be one off either way: scan from the
  // cycle before it (entries increase across cycles, since the period exceeds the last time).
  double cycle = (std::floor((t - first) / period_s) - 1) * period_s;
  for (int k = 0; k < 4; ++k, cycle += period_s)
    for (const auto& [time, value] : series)
      if (time + cycle > t) return time + cycle;
  return std::nextafter(t, NEVER);  // t is too large for the period to advance it: move on regardless
}

}  // namespace

models::AlphaBeta analytic_alpha_beta(const platforms::Topology& topo) {
  const auto& g = topo.graph;
  const auto n = boost::num_vertices(g);
  double min_bw = std::numeric_limits<double>::infinity();
  for (auto e : boost::make_iterator_range(boost::edges(g))) min_bw = std::min(min_bw, g[e].bandwidth_Bps);
  // alpha: the worst path latency between two hosts (routes of fewest hops, as the emitted platform's).
  // The builders' platforms look the same from every host, so worker 0's paths give it; on a custom
  // platform the worst path may join two other hosts (a ring pays its slowest hop at every step),
  // so every host's paths are searched.
  std::vector<int> hops(n);
  std::vector<double> lat(n);
  models::AlphaBeta ab;
  auto from = [&](platforms::Vertex src) {
    std::fill(hops.begin(), hops.end(), -1);
    std::fill(lat.begin(), lat.end(), 0.0);
    std::queue<platforms::Vertex> queue;
    hops[src] = 0;
    queue.push(src);
    while (!queue.empty()) {
      auto v = queue.front();
      queue.pop();
      for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
        auto w = boost::target(e, g);
        if (hops[w] < 0) {
          hops[w] = hops[v] + 1;
          lat[w] = lat[v] + g[e].latency_s;
          queue.push(w);
        }
      }
    }
    for (auto v : topo.workers) ab.alpha_s = std::max(ab.alpha_s, lat[v]);
    for (auto v : topo.servers) ab.alpha_s = std::max(ab.alpha_s, lat[v]);
  };
  if (topo.kind == "custom") {
    for (auto v : topo.workers) from(v);
    for (auto v : topo.servers) from(v);
  } else {
    from(topo.workers.front());
  }
  ab.beta_s_per_byte = std::isfinite(min_bw) ? 1.0 / min_bw : 0.0;
  ab.local = intra_node_link_class(topo);  // hierarchical platforms only
  return ab;
}

ExecutorNetwork executor_network(const NetworkSpec& network) {
  ExecutorNetwork out;
  if (network.model == NetworkModel::CALIBRATED) {
    out.latency_factor = network.latency_factor;
    out.bandwidth_factor = network.bandwidth_factor;
  } else if (network.model == NetworkModel::TCP) {
    out.latency_factor = TCP_LATENCY_FACTOR;
    out.bandwidth_factor = TCP_BANDWIDTH_FACTOR;
  }
  out.software = network.software;
  out.rate_caps = network.fidelity != Fidelity::PACKET;
  return out;
}

AnalyticNetwork::AnalyticNetwork(const platforms::Topology& topology, const NetworkSpec& network)
    : topology_(topology), software_(network.software) {
  if (network.model == NetworkModel::CALIBRATED) {
    latency_factor_ = network.latency_factor;
    bandwidth_factor_ = network.bandwidth_factor;
  } else if (network.model == NetworkModel::TCP) {  // LV08's factors (engine/engine.cpp); no window, no cross traffic
    latency_factor_ = TCP_LATENCY_FACTOR;
    bandwidth_factor_ = TCP_BANDWIDTH_FACTOR;
  }
  auto& g = topology_.graph;
  const auto edges = boost::num_edges(g);
  bandwidth_trace_.resize(edges);
  latency_trace_.resize(edges);
  std::size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    nominal_bandwidth_Bps_.push_back(g[e].bandwidth_Bps);
    nominal_latency_s_.push_back(g[e].latency_s);
    // The same traces as at flow fidelity (link_trace_of, scenario/scenario.hpp).
    const auto of = link_trace_of(network.link_traces, g[e].name);
    if (of.bandwidth != nullptr) bandwidth_trace_[i] = EdgeTrace{&of.bandwidth->bandwidth_Bps, of.bandwidth->period_s};
    if (of.latency != nullptr) latency_trace_[i] = EdgeTrace{&of.latency->latency_s, of.latency->period_s};
    ++i;
  }
  for (const auto& trace : network.link_traces) traces_.push_back(&trace);
  const double end = next_change(0);
  segments_.push_back(Segment{0, end, evaluate(inside(0, end))});
}

models::AlphaBeta AnalyticNetwork::evaluate(double t) {
  auto& g = topology_.graph;
  std::size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const auto& bw = bandwidth_trace_[i];
    const auto& lat = latency_trace_[i];
    g[e].bandwidth_Bps = bw.series ? value_at(*bw.series, bw.period_s, nominal_bandwidth_Bps_[i], t)
                                   : nominal_bandwidth_Bps_[i];
    g[e].latency_s = lat.series ? value_at(*lat.series, lat.period_s, nominal_latency_s_[i], t) : nominal_latency_s_[i];
    ++i;
  }
  models::AlphaBeta ab = analytic_alpha_beta(topology_).scaled(latency_factor_, bandwidth_factor_);
  ab.software = software_;
  return ab;
}

double AnalyticNetwork::inside(double start, double end) {
  // A periodic entry's time t + k P is found by next_entry() and read back by value_at() through
  // t - floor(...) P, which rounding can put just before the entry (1.9 - 1 < 0.9): evaluated at a
  // segment's start, a repeat after the first period read the previous entry's value. Between two
  // changes every time has the segment's values, so the middle is read instead.
  return std::isfinite(end) ? start + (end - start) / 2 : start;
}

double AnalyticNetwork::next_change(double t) const {
  double next = NEVER;
  for (const auto* trace : traces_) {
    if (!trace->bandwidth_Bps.empty()) next = std::min(next, next_entry(trace->bandwidth_Bps, trace->period_s, t));
    if (!trace->latency_s.empty()) next = std::min(next, next_entry(trace->latency_s, trace->period_s, t));
  }
  return next;
}

const AnalyticNetwork::Segment& AnalyticNetwork::segment_at(double t) {
  while (segments_.back().end <= t) {
    const double start = segments_.back().end;
    // Every segment ends strictly after it starts, so this loop always reaches t.
    const double end = std::max(next_change(start), std::nextafter(start, NEVER));
    segments_.push_back(Segment{start, end, evaluate(inside(start, end))});
  }
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](double x, const Segment& s) { return x < s.start; });
  return *std::prev(it);
}

const models::AlphaBeta& AnalyticNetwork::at(double t) { return segment_at(t).ab; }

const platforms::Topology& AnalyticNetwork::traced_topology(double t) {
  const Segment& seg = segment_at(t);
  (void)evaluate(inside(seg.start, seg.end));  // sets the edges' values
  return topology_;
}

double AnalyticNetwork::finish(double t0, double latency_s, double transfer_s) {
  const double beta0 = at(t0).beta_s_per_byte;
  double t = t0 + latency_s;
  if (transfer_s <= 0 || constant() || beta0 <= 0) return t + transfer_s;
  double remaining = transfer_s;  // seconds of transfer at t0's rate
  while (true) {
    const Segment& seg = segment_at(t);
    const double speed = seg.ab.beta_s_per_byte > 0 ? beta0 / seg.ab.beta_s_per_byte : NEVER;
    const double span = seg.end - t;
    if (remaining <= span * speed) return t + remaining / speed;
    remaining -= span * speed;
    t = seg.end;
  }
}

CostTerms cost_terms(const models::Collective& algorithm, const models::CollectiveGroup& group, double bytes,
                     const models::AlphaBeta& ab) {
  using Part = models::AlphaBeta::Part;
  const CostTerms terms{algorithm.analytic_time_s(group, bytes, ab.only(Part::LATENCY)),
                        algorithm.analytic_time_s(group, bytes, ab.only(Part::TRANSFER))};
  const double whole = algorithm.analytic_time_s(group, bytes, ab);
  // The closed forms sum one term per step, and a schedule may have millions of steps (a tree of
  // 2^20 segments): rounding alone reaches ~1e-9 of the whole there, a nonlinearity far more.
  if (std::abs(whole - terms.latency_s - terms.transfer_s) > 1e-7 * std::max(whole, 1e-12))
    throw std::logic_error(fmt::format("closed form of {} is not linear in alpha and beta ({:.17g} != {:.17g} + {:.17g})",
                                       algorithm.operation(), whole, terms.latency_s, terms.transfer_s));
  return terms;
}

}  // namespace ddlsim::sim
