// ddlsim: the network as analytic fidelity sees it, over time.
//
// Analytic fidelity costs a collective by its closed form T(alpha, beta)
// (models/collective.hpp). This class supplies alpha and beta at any simulated
// time with everything the flow engine would apply:
//   * the network model's factors: `calibrated` multiplies every latency by
//     latency_factor and every bandwidth by bandwidth_factor (alpha x lf,
//     beta / bf), exactly as SimGrid's CM02 does at flow fidelity; `ideal` is
//     exact alpha-beta; `tcp` applies LV08's factors (13.01, 0.97) only to pick
//     `auto`'s algorithm at flow fidelity: the loader refuses it at analytic fidelity;
//   * link traces: piecewise-constant link bandwidths and latencies (SimGrid
//     profile semantics: entry (t_i, v) holds from t_i, repeated at t_i + k P
//     with a period P); alpha and beta are recomputed from the traced graph at
//     every change, with the same rule as analytic_alpha_beta.
// A collective starting at t0 pays its latency term at the alpha in force at
// t0, then its bandwidth term, T(0, beta(t0)) seconds of transfer at t0's
// bottleneck rate, progressing at beta(t0) / beta(t) while the links change:
// exact for a constant network and for a bandwidth change on latency-free
// links; otherwise the latency of a step that straddles a change is charged at
// the collective's start (docs/scenario.md).
#pragma once

#include "models/collective.hpp"
#include "scenario/scenario.hpp"
#include "scenario/executor_network.hpp"

#include <memory>
#include <vector>

namespace ddlsim::sim {

/// SimGrid LV08's latency and bandwidth factors (the `tcp` network model).
inline constexpr double TCP_LATENCY_FACTOR = 13.01;
inline constexpr double TCP_BANDWIDTH_FACTOR = 0.97;

/// The network model's latency and bandwidth factors (1 for ideal, LV08's for tcp) and the
/// software costs, as the schedule executor applies them.
ExecutorNetwork executor_network(const NetworkSpec& network);

/// The alpha (worst host-to-host path latency from worker 0) and beta (inverse
/// of the slowest link's bandwidth) used by analytic fidelity; on a platform of
/// multi-GPU nodes (Topology::gpus_per_node > 0) also the intra-node pair `local`:
/// twice the worst worker-link latency and the inverse of the slowest worker link.
models::AlphaBeta analytic_alpha_beta(const platforms::Topology& topology);

class AnalyticNetwork {
 public:
  AnalyticNetwork(const platforms::Topology& topology, const NetworkSpec& network);

  /// alpha and beta in force at time `t` (seconds from the start of the run).
  const models::AlphaBeta& at(double t);
  /// When a collective that starts at `t0`, pays `latency_s` and then
  /// `transfer_s` of transfer at t0's bottleneck rate, ends.
  double finish(double t0, double latency_s, double transfer_s);
  /// The platform with every traced link at its value at `t` (valid until the next call).
  const platforms::Topology& traced_topology(double t);
  /// True when alpha and beta never change.
  [[nodiscard]] bool constant() const { return traces_.empty(); }

 private:
  struct Segment {
    double start = 0;
    double end = 0;
    models::AlphaBeta ab;
  };
  /// The trace entry of one link property, repeated with its period.
  struct EdgeTrace {
    const std::vector<std::pair<double, double>>* series = nullptr;
    double period_s = -1;
  };
  const Segment& segment_at(double t);
  [[nodiscard]] double next_change(double t) const;
  /// A time strictly inside [start, end) at which to read the segment's values.
  [[nodiscard]] static double inside(double start, double end);
  [[nodiscard]] models::AlphaBeta evaluate(double t);

  platforms::Topology topology_;  // a copy whose edge values are set to the traced ones
  std::vector<double> nominal_bandwidth_Bps_, nominal_latency_s_;
  std::vector<EdgeTrace> bandwidth_trace_, latency_trace_;  // per edge (series null: nominal)
  std::vector<const LinkTrace*> traces_;
  double latency_factor_ = 1, bandwidth_factor_ = 1;
  std::shared_ptr<const models::SoftwareCost> software_;
  std::vector<Segment> segments_;  // contiguous from 0, extended on demand
};

/// The closed form of `algorithm` split into its latency and transfer terms:
/// T(alpha, beta) = T(alpha, 0) + T(0, beta). Throws std::logic_error if the
/// closed form is not linear in alpha and beta (every registered algorithm is).
struct CostTerms {
  double latency_s = 0;
  double transfer_s = 0;
};
CostTerms cost_terms(const models::Collective& algorithm, const models::CollectiveGroup& group, double bytes,
                     const models::AlphaBeta& ab);

}  // namespace ddlsim::sim
