#include "engine/fluid_links.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace ddlsim::sim {
namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

/// Two predicted ends this close (relative) are one event: the sums that predict them round
/// differently (SimGrid ends a flow within its own precision too, sg_maxmin_precision).
bool due(double end, double t) { return end <= t + 1e-12 * std::max(1.0, std::abs(t)); }

}  // namespace

int FluidLinks::add_link(double capacity, bool hub) {
  if (!(capacity > 0) || !std::isfinite(capacity)) throw std::invalid_argument("FluidLinks: a link's capacity must be positive and finite");
  Link l;
  l.capacity = capacity;
  l.hub = hub;
  links_.push_back(std::move(l));
  return static_cast<int>(links_.size()) - 1;
}

double FluidLinks::hub_flow_end(int h, double vend) const {
  const Link& l = links_[static_cast<std::size_t>(h)];
  return l.since + std::max(0.0, vend - l.virtual_time) / l.level;
}

void FluidLinks::touch_hub(int h, double now) {
  Link& l = links_[static_cast<std::size_t>(h)];
  if (l.flows > 0) l.virtual_time += l.level * (now - l.since);
  l.since = now;
}

void FluidLinks::reprice_hub(int h) {
  Link& l = links_[static_cast<std::size_t>(h)];
  if (l.in_levels) hub_levels_.erase(hub_levels_.find(l.level));
  if (!explicit_ && l.ends_at < INF) hub_ends_.erase({l.ends_at, h});
  l.ends_at = INF;
  l.in_levels = l.flows > 0;
  l.level = l.in_levels ? l.capacity / l.inv_penalties : 0;
  if (l.in_levels) hub_levels_.insert(l.level);
  if (!explicit_ && !l.ends.empty()) {
    l.ends_at = hub_flow_end(h, l.ends.top().first);
    hub_ends_.insert({l.ends_at, h});
  }
  const bool violating = l.in_levels && !l.bound_levels.empty() && l.level > *l.bound_levels.begin();
  bound_violations_ += static_cast<int>(violating) - static_cast<int>(l.violating);
  l.violating = violating;
}

void FluidLinks::reprice_local(int i) {
  Link& l = links_[static_cast<std::size_t>(i)];
  if (l.in_ratios) local_ratios_.erase(local_ratios_.find(l.ratio));
  l.in_ratios = l.flows > 0;
  l.ratio = l.in_ratios ? l.capacity / l.inv_penalties : 0;
  if (l.in_ratios) local_ratios_.insert(l.ratio);
}

void FluidLinks::add_to_links(const FlowState& f, double sign) {
  const double inv = 1.0 / f.spec.penalty;
  auto& hub = links_[static_cast<std::size_t>(f.spec.hub)];
  hub.flows += static_cast<std::int64_t>(sign);
  hub.inv_penalties = hub.flows == 0 ? 0.0 : hub.inv_penalties + sign * inv;
  if (std::isfinite(f.spec.bound)) {
    const double level = f.spec.bound * f.spec.penalty;
    if (sign > 0) hub.bound_levels.insert(level);
    else hub.bound_levels.erase(hub.bound_levels.find(level));
  }
  for (const int i : f.spec.locals) {
    auto& l = links_[static_cast<std::size_t>(i)];
    l.flows += static_cast<std::int64_t>(sign);
    l.inv_penalties = l.flows == 0 ? 0.0 : l.inv_penalties + sign * inv;
    reprice_local(i);
  }
}

bool FluidLinks::implicit_exact() const {
  if (bound_violations_ > 0) return false;
  // Every flow at hub h runs at L_h / p; a local link carries sum(L_h / p) <= max L x sum(1/p).
  return hub_levels_.empty() || local_ratios_.empty() || *hub_levels_.rbegin() <= *local_ratios_.begin();
}

std::int64_t FluidLinks::start(const Flow& flow, double now) {
  if (flow.hub < 0 || static_cast<std::size_t>(flow.hub) >= links_.size() || !links_[static_cast<std::size_t>(flow.hub)].hub)
    throw std::invalid_argument("FluidLinks: a flow needs a hub link");
  for (const int i : flow.locals)
    if (i < 0 || static_cast<std::size_t>(i) >= links_.size() || links_[static_cast<std::size_t>(i)].hub)
      throw std::invalid_argument("FluidLinks: a flow's other links must be local links");
  if (!(flow.penalty > 0) || !(flow.factor > 0) || !(flow.bound > 0) || !(flow.units >= 0))
    throw std::invalid_argument("FluidLinks: a flow needs a positive penalty, factor and bound");
  if (unsettled_ && !due(now, now_)) settle();  // time moved on since the last starts
  progress_to(now);
  std::int64_t id = static_cast<std::int64_t>(flows_.size());
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  FlowState f;
  f.spec = flow;
  f.running = true;
  f.slot = running_ids_.size();
  running_ids_.push_back(id);
  ++running_;
  if (!explicit_) {
    touch_hub(flow.hub, now);
    f.vend = links_[static_cast<std::size_t>(flow.hub)].virtual_time + flow.units * flow.penalty / flow.factor;
    links_[static_cast<std::size_t>(flow.hub)].ends.push({f.vend, id});
  } else {
    f.remaining = flow.units;
  }
  add_to_links(f, +1);
  if (static_cast<std::size_t>(id) == flows_.size()) flows_.push_back(std::move(f));
  else flows_[static_cast<std::size_t>(id)] = std::move(f);
  reprice_hub(flow.hub);
  unsettled_ = true;  // settled when time moves on: starts at one instant are one event
  return id;
}

void FluidLinks::settle() {
  unsettled_ = false;
  ++stats_.events;
  const bool exact = implicit_exact();
  if (!explicit_ && !exact) {
    to_explicit();
  } else if (explicit_ && exact) {
    to_implicit();
  } else if (explicit_) {
    solve_explicit();
  }
  if (explicit_) ++stats_.explicit_events;
}

double FluidLinks::next_completion() {
  if (unsettled_) settle();
  if (explicit_) return explicit_next_;
  return hub_ends_.empty() ? INF : hub_ends_.begin()->first;
}

void FluidLinks::progress_to(double t) {
  if (!due(now_, t)) throw std::logic_error("FluidLinks: time went backwards");
  t = std::max(t, now_);  // a clock a rounding behind the last event
  if (explicit_ && t > now_)
    for (const auto id : running_ids_) {
      auto& f = flows_[static_cast<std::size_t>(id)];
      f.remaining = std::max(0.0, f.remaining - f.value * f.spec.factor * (t - now_));
    }
  now_ = t;
}

std::vector<std::int64_t> FluidLinks::advance(double now) {
  std::vector<std::int64_t> ended;
  while (running_ > 0) {
    const double t = next_completion();
    if (!due(t, now)) break;
    progress_to(std::max(t, now_));
    const double at = now_;
    std::vector<std::int64_t> batch;
    if (explicit_) {
      for (const auto id : running_ids_)
        if (due(flows_[static_cast<std::size_t>(id)].ends_at, at)) batch.push_back(id);
    } else {
      std::vector<int> hubs;
      for (auto it = hub_ends_.begin(); it != hub_ends_.end() && due(it->first, at); ++it) hubs.push_back(it->second);
      for (const int h : hubs) {
        touch_hub(h, at);
        auto& l = links_[static_cast<std::size_t>(h)];
        while (!l.ends.empty() && due(hub_flow_end(h, l.ends.top().first), at)) {
          batch.push_back(l.ends.top().second);
          l.ends.pop();
        }
      }
    }
    std::sort(batch.begin(), batch.end());
    for (const auto id : batch) {
      auto& f = flows_[static_cast<std::size_t>(id)];
      if (!explicit_) touch_hub(f.spec.hub, at);
      f.running = false;
      const auto last = running_ids_.back();
      running_ids_[f.slot] = last;
      flows_[static_cast<std::size_t>(last)].slot = f.slot;
      running_ids_.pop_back();
      --running_;
      add_to_links(f, -1);
      reprice_hub(f.spec.hub);
    }
    for (const auto id : batch) free_ids_.push_back(id);
    settle();
    ended.insert(ended.end(), batch.begin(), batch.end());
  }
  progress_to(std::max(now, now_));
  return ended;
}

void FluidLinks::to_explicit() {
  for (const auto id : running_ids_) {
    auto& f = flows_[static_cast<std::size_t>(id)];
    touch_hub(f.spec.hub, now_);
    f.remaining = std::max(0.0, (f.vend - links_[static_cast<std::size_t>(f.spec.hub)].virtual_time) * f.spec.factor / f.spec.penalty);
  }
  for (std::size_t h = 0; h < links_.size(); ++h) {
    auto& l = links_[h];
    if (!l.hub) continue;
    if (l.ends_at < INF) hub_ends_.erase({l.ends_at, static_cast<int>(h)});
    l.ends_at = INF;
    l.ends = {};
  }
  explicit_ = true;
  ++stats_.switches;
  solve_explicit();
}

void FluidLinks::to_implicit() {
  explicit_ = false;
  ++stats_.switches;
  for (auto& l : links_)
    if (l.hub) {
      l.virtual_time = 0;
      l.since = now_;
      l.ends = {};
    }
  for (const auto id : running_ids_) {
    auto& f = flows_[static_cast<std::size_t>(id)];
    f.vend = f.remaining * f.spec.penalty / f.spec.factor;
    links_[static_cast<std::size_t>(f.spec.hub)].ends.push({f.vend, id});
  }
  for (std::size_t h = 0; h < links_.size(); ++h)
    if (links_[h].hub) reprice_hub(static_cast<int>(h));
}

void FluidLinks::solve_explicit() {
  // Progressive filling, weighted by 1/p: the level rises until a link saturates (every flow
  // still free on it takes level / p) or a flow reaches its bound.
  const std::size_t n = links_.size();
  if (left_.size() < n) {
    left_.resize(n);
    weight_.resize(n);
    free_flows_.resize(n);
    version_.resize(n);
    on_.resize(n);
  }
  if (frozen_.size() < flows_.size()) frozen_.resize(flows_.size());
  touched_.clear();
  auto each_link = [](const FlowState& f, auto&& fn) {
    fn(f.spec.hub);
    for (const int i : f.spec.locals) fn(i);
  };
  for (const auto id : running_ids_) {
    const auto& f = flows_[static_cast<std::size_t>(id)];
    frozen_[static_cast<std::size_t>(id)] = 0;
    each_link(f, [&](int i) {
      const auto k = static_cast<std::size_t>(i);
      if (free_flows_[k] == 0 && on_[k].empty()) {
        touched_.push_back(i);
        left_[k] = links_[k].capacity;
        weight_[k] = 0;
        version_[k] = 0;
      }
      on_[k].push_back(id);
      weight_[k] += 1.0 / f.spec.penalty;
      ++free_flows_[k];
    });
  }
  struct Step {
    double level;
    int kind;  // 0: a link saturates, 1: a flow reaches its bound
    std::int64_t index;
    std::int64_t version;
    bool operator>(const Step& o) const { return std::tie(level, kind, index) > std::tie(o.level, o.kind, o.index); }
  };
  std::vector<Step> heap;
  heap.reserve(touched_.size() * 2);
  std::priority_queue<Step, std::vector<Step>, std::greater<>> steps(std::greater<>{}, std::move(heap));
  for (const int i : touched_) {
    const auto k = static_cast<std::size_t>(i);
    steps.push({left_[k] / weight_[k], 0, i, 0});
  }
  for (const auto id : running_ids_) {
    const auto& f = flows_[static_cast<std::size_t>(id)];
    if (std::isfinite(f.spec.bound)) steps.push({f.spec.bound * f.spec.penalty, 1, id, 0});
  }
  auto freeze = [&](std::int64_t id, double value) {
    frozen_[static_cast<std::size_t>(id)] = 1;
    auto& f = flows_[static_cast<std::size_t>(id)];
    f.value = value;
    each_link(f, [&](int i) {
      const auto k = static_cast<std::size_t>(i);
      left_[k] = std::max(0.0, left_[k] - value);
      weight_[k] -= 1.0 / f.spec.penalty;
      if (--free_flows_[k] > 0) steps.push({left_[k] / weight_[k], 0, i, ++version_[k]});
      else ++version_[k];
    });
  };
  while (!steps.empty()) {
    const Step s = steps.top();
    steps.pop();
    if (s.kind == 1) {
      if (!frozen_[static_cast<std::size_t>(s.index)]) freeze(s.index, flows_[static_cast<std::size_t>(s.index)].spec.bound);
      continue;
    }
    const auto k = static_cast<std::size_t>(s.index);
    if (s.version != version_[k] || free_flows_[k] == 0) continue;
    for (const auto id : on_[k])
      if (!frozen_[static_cast<std::size_t>(id)]) freeze(id, s.level / flows_[static_cast<std::size_t>(id)].spec.penalty);
  }
  for (const int i : touched_) {
    const auto k = static_cast<std::size_t>(i);
    on_[k].clear();
    free_flows_[k] = 0;
  }
  explicit_next_ = INF;
  for (const auto id : running_ids_) {
    auto& f = flows_[static_cast<std::size_t>(id)];
    f.ends_at = f.value > 0 ? now_ + f.remaining / (f.value * f.spec.factor) : INF;
    explicit_next_ = std::min(explicit_next_, f.ends_at);
  }
}

std::map<std::int64_t, double> FluidLinks::rates() {
  if (unsettled_) settle();
  std::map<std::int64_t, double> out;
  for (const auto id : running_ids_) {
    const auto& f = flows_[static_cast<std::size_t>(id)];
    out[id] = explicit_ ? f.value : links_[static_cast<std::size_t>(f.spec.hub)].level / f.spec.penalty;
  }
  return out;
}

}  // namespace ddlsim::sim
