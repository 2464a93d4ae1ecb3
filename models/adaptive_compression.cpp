#include "models/adaptive_compression.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <fmt/format.h>

namespace ddlsim::models {
namespace {

/// True when `now` differs from `ref` by `threshold` or more, relatively (from 0: any change).
bool changed(double now, double ref, double threshold) {
  if (ref == 0) return now != 0;
  return std::abs(now - ref) >= threshold * std::abs(ref) * (1 - 1e-12);
}

}  // namespace

std::optional<double> LiveGains::recent(int from, int to, int n) const {
  double sum = 0;
  int count = 0;
  for (auto it = gains_.lower_bound(to); it != gains_.begin() && count < n;) {
    --it;
    if (it->first < from) break;
    sum += it->second;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

AdaptiveController::AdaptiveController(AdaptiveSettings settings, GainModel gain, double compute_s)
    : settings_(std::move(settings)), gain_(std::move(gain)), compute_s_(compute_s) {
  if (settings_.candidates.empty() || settings_.explore_iterations < 1)
    throw std::invalid_argument("adaptive compression needs candidates and at least one iteration per candidate");
}

AdaptiveController::AdaptiveController(AdaptiveSettings settings, const LiveGains* live, double compute_s)
    : settings_(std::move(settings)), live_(live), compute_s_(compute_s) {
  if (settings_.candidates.empty() || settings_.explore_iterations < 1)
    throw std::invalid_argument("adaptive compression needs candidates and at least one iteration per candidate");
  if (live_ == nullptr) throw std::invalid_argument("adaptive compression with live gains needs their source");
}

std::optional<double> AdaptiveController::gain_of(int candidate, int from, int to, int it) const {
  if (live_ != nullptr) return live_->recent(from, to);
  return gain_->gain(settings_.candidates[static_cast<std::size_t>(candidate)], it);
}

double AdaptiveController::score(double parallel_efficiency, double gain) const {
  return std::max((1 - parallel_efficiency) / settings_.time_weight, (1 - gain) / settings_.gain_weight);
}

bool AdaptiveController::choice_point(int it) const {
  if (!exploring_ || explorations_.empty()) return false;
  const int n = static_cast<int>(settings_.candidates.size());
  return it == explorations_.back().start_iteration + n * settings_.explore_iterations;
}

void AdaptiveController::start_exploration(int it, const NetworkProbe& probe, std::string reason) {
  Exploration e;
  e.start_iteration = it;
  e.reason = std::move(reason);
  e.probe = probe;
  explorations_.push_back(std::move(e));
  exploring_ = true;
}

void AdaptiveController::choose(int it) {
  auto& e = explorations_.back();
  const int per = settings_.explore_iterations;
  for (std::size_t k = 0; k < settings_.candidates.size(); ++k) {
    CandidateOutcome o;
    o.ratio = settings_.candidates[k];
    Sums s;
    for (int i = e.start_iteration + static_cast<int>(k) * per; i < e.start_iteration + static_cast<int>(k + 1) * per; ++i) {
      const auto& r = reports_.at(static_cast<std::size_t>(i));
      s.step_s += r.step_s;
      s.codec_s += r.codec_s;
      s.comm_s += r.comm_s;
      s.count += r.count;
    }
    if (s.count == 0) throw std::logic_error("adaptive compression: a candidate was explored without reports");
    o.step_s = s.step_s / s.count;
    o.codec_s = s.codec_s / s.count;
    o.comm_busy_s = s.comm_s / s.count;
    const int from = e.start_iteration + static_cast<int>(k) * per;
    const auto gain = gain_of(static_cast<int>(k), from, from + per, it);
    if (!gain)  // every explored iteration has completed at a choice (the caller synchronised the workers)
      throw std::logic_error(fmt::format("adaptive compression: no live gain of candidate {} at iteration {}", k, it));
    o.gain = *gain;
    o.parallel_efficiency = o.step_s > 0 ? std::min(1.0, compute_s_ / o.step_s) : 1.0;
    o.score = score(o.parallel_efficiency, o.gain);
    e.outcomes.push_back(o);
  }
  int best = 0;  // ties to the larger ratio: candidates are descending, keep the first
  for (int k = 1; k < static_cast<int>(e.outcomes.size()); ++k)
    if (e.outcomes[static_cast<std::size_t>(k)].score < e.outcomes[static_cast<std::size_t>(best)].score * (1 - 1e-12))
      best = k;
  e.chosen = best;
  e.choice_iteration = it;
  chosen_ = best;
  chosen_gain_ = e.outcomes[static_cast<std::size_t>(best)].gain;
  exploring_ = false;
}

std::string AdaptiveController::trigger(int it, const NetworkProbe& probe) const {
  const auto& ref = explorations_.back().probe;
  const double thr = settings_.change_threshold;
  if (changed(probe.beta_s_per_byte, ref.beta_s_per_byte, thr)) return "bandwidth";
  if (changed(probe.alpha_s, ref.alpha_s, thr)) return "latency";
  const auto now = gain_of(chosen_, explorations_.back().choice_iteration, it, it);  // live: none measured yet, no trigger
  if (now && changed(*now, chosen_gain_, thr)) return "gain";
  return "";
}

AdaptiveController::Decision AdaptiveController::decide(int it, const NetworkProbe& probe) {
  if (it != next_) throw std::logic_error(fmt::format("adaptive compression: decided iteration {} before {}", it, next_));
  ++next_;
  if (it == 0) start_exploration(it, probe, "start");
  else if (choice_point(it)) choose(it);
  else if (!exploring_)
    if (auto why = trigger(it, probe); !why.empty()) start_exploration(it, probe, std::move(why));
  if (exploring_) {
    const int k = (it - explorations_.back().start_iteration) / settings_.explore_iterations;
    return Decision{k, true};
  }
  return Decision{chosen_, false};
}

void AdaptiveController::report(int it, double step_s, double codec_s, double comm_busy_s) {
  if (it < 0) return;
  if (reports_.size() <= static_cast<std::size_t>(it)) reports_.resize(static_cast<std::size_t>(it) + 1);
  auto& r = reports_[static_cast<std::size_t>(it)];
  r.step_s += step_s;
  r.codec_s += codec_s;
  r.comm_s += comm_busy_s;
  ++r.count;
}

}  // namespace ddlsim::models
