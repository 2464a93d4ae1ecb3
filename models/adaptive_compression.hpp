// ddlsim: adaptive compression ratio (seed 002's multi-objective optimisation).
//
// Seed 002 (Tyagi & Swany, IEEE BigData 2023, and its code, github.com/sahiltyagi4/ARTopk,
// flexible_compression/adaptive_moo): parallel and statistical efficiency are
// Pareto-related, so the compression ratio (CR) is chosen as
//     c_opt = argmin_c F(t_comp(c), t_sync(c), 1 / gain(c))
// over candidates from c_high = 0.1 down to c_low = 0.001 by a factor of 3 (0.1, 0.033,
// 0.011, 0.004, 0.001). An exploration phase runs every candidate (the seed: from a
// checkpoint, explore_itrs = 10 steps each) and measures its compression time,
// communication time and gain; exploration is triggered again when the latency, the
// bandwidth or the gain changes by 10 % or more.
//
// This controller is that loop over simulated iterations, deterministic:
//  * exploration: candidate k runs iterations s + kE .. s + (k+1)E - 1 (E =
//    explore_iterations); every worker reports each iteration's time, its encode/decode
//    time and its communication time; at iteration s + nE the choice is made;
//  * the objective, per candidate: the time objective is 1 - E_par(c), the step time not
//    spent computing, E_par(c) = t_compute / t_step(c) with t_step(c) = t_compute +
//    t_sync(c) + t_comp-decomp(c) as measured (exposed) and t_compute the profile's
//    single-worker iteration; the statistical objective is 1 - gain(c) (GainModel). They
//    are scalarised as the seed's code does, an achievement scalarising function with its
//    weights (0.6 time, 0.4 gain): score(c) = max((1 - E_par) / 0.6, (1 - gain) / 0.4),
//    smallest wins, ties to the larger CR. The seed normalises both objectives between the
//    ideal and nadir points of the candidates' own front, which makes the choice blind to a
//    network that slows every candidate alike; the ideal point here is fixed, (0, 0):
//    perfect parallel and statistical efficiency (docs/compression.md).
//  * triggers, checked every iteration after a choice: the network probe (alpha and beta
//    of the platform now, what the seed measures with traceroute and iperf) against the
//    probe at the start of the last exploration, and gain(c_opt) now against gain(c_opt)
//    when it was chosen; a relative change >= change_threshold starts an exploration.
//
// The gain comes from a fitted gain model (gain_model.hpp), or, with a co-simulated training
// ("gain_model": "live", docs/convergence.md), from that training's own gradients (LiveGains):
// iteration i's gain is sum_w ||C(g_e,w)||^2 / sum_w ||g_e,w||^2 of the step the co-simulation
// took at the ratio i ran; a candidate's gain is the mean of the last five of its exploration
// iterations (tools/measure_gain.py's rule), and gain(c_opt) now the mean of the last five
// iterations since the choice whose numerics have run.
#pragma once

#include "models/gain_model.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::models {

struct AdaptiveSettings {
  std::vector<double> candidates{0.1, 0.033, 0.011, 0.004, 0.001};  // descending
  int explore_iterations = 10;
  double change_threshold = 0.1;
  double time_weight = 0.6;
  double gain_weight = 0.4;
};

/// What the controller sees of the network: the platform's alpha and beta now.
struct NetworkProbe {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
};

struct CandidateOutcome {
  double ratio = 0;
  double step_s = 0;        // mean iteration time while it ran (over workers and iterations)
  double codec_s = 0;       // of which encode and decode
  double comm_busy_s = 0;   // communication-stream busy time per iteration
  double gain = 0;          // gain model at the choice
  double parallel_efficiency = 0;
  double score = 0;
};

struct Exploration {
  int start_iteration = 0;
  int choice_iteration = -1;  // -1: the run ended before the choice
  std::string reason;         // "start", "bandwidth", "latency", "gain"
  NetworkProbe probe;         // at the start
  std::vector<CandidateOutcome> outcomes;
  int chosen = -1;            // index into the candidates
};

/// Gains measured on a co-simulated training's own gradients, iteration by iteration.
class LiveGains {
 public:
  void record(int iteration, double gain) { gains_[iteration] = gain; }
  /// The mean of the last `n` gains recorded for iterations in [from, to); nullopt when none is.
  [[nodiscard]] std::optional<double> recent(int from, int to, int n = 5) const;

 private:
  std::map<int, double> gains_;
};

class AdaptiveController {
 public:
  /// `compute_s`: the profile's single-worker iteration time (no communication).
  AdaptiveController(AdaptiveSettings settings, GainModel gain, double compute_s);
  /// Gains measured live (`live` outlives the controller and is fed as iterations complete).
  AdaptiveController(AdaptiveSettings settings, const LiveGains* live, double compute_s);

  struct Decision {
    int candidate = 0;
    bool exploring = false;
  };
  /// True when deciding iteration `it` makes a choice, which needs every worker's reports
  /// of the iterations before it (the caller synchronises the workers first).
  [[nodiscard]] bool choice_point(int it) const;
  /// The candidate that runs iteration `it`; called once per iteration, in order.
  Decision decide(int it, const NetworkProbe& probe);
  /// One worker's measurement of iteration `it`.
  void report(int it, double step_s, double codec_s, double comm_busy_s);

  [[nodiscard]] const AdaptiveSettings& settings() const { return settings_; }
  [[nodiscard]] const std::vector<Exploration>& explorations() const { return explorations_; }
  /// The objective of one candidate (exposed for tests and docs).
  [[nodiscard]] double score(double parallel_efficiency, double gain) const;

 private:
  struct Sums {
    double step_s = 0, codec_s = 0, comm_s = 0;
    int count = 0;
  };
  void start_exploration(int it, const NetworkProbe& probe, std::string reason);
  void choose(int it);
  [[nodiscard]] std::string trigger(int it, const NetworkProbe& probe) const;

  AdaptiveSettings settings_;
  [[nodiscard]] std::optional<double> gain_of(int candidate, int from, int to, int it) const;
  std::optional<GainModel> gain_;
  const LiveGains* live_ = nullptr;
  double compute_s_;
  std::vector<Sums> reports_;  // per iteration
  std::vector<Exploration> explorations_;
  bool exploring_ = false;
  int chosen_ = 0;
  double chosen_gain_ = 0;
  int next_ = 0;  // the next iteration to decide
};

}  // namespace ddlsim::models
