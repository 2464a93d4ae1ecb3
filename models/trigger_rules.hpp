// ddlsim: the decision rules of the event-driven sync models, as their sources state them. The
// simulator applies them to the norms a training trace recorded (docs/traces.md) to check the
// trace, and to its own surrogate schedules; tests check them on hand-made sequences.
//
//  - EventTrigger (seed 000, EventGraD; github.com/soumyadipghosh/eventgrad, dmnist/event/event.cpp):
//    per parameter tensor, send when |norm - norm at last send| >= threshold, or always during the
//    first passes. Constant threshold, or adaptive: the mean of the last two slopes
//    (norm change / passes between sends) at each send, multiplied by `horizon` every pass, as
//    the seed's code does (so p passes after a send it is slope_mean * horizon^p).
//  - ordered_selection (seed 003, Chen et al., SPAWC 2020): the m workers with the largest total
//    gradient norm transmit; ties to the lower rank.
//  - SelSyncTrigger (SelSync, Tyagi & Swany, CLUSTER 2023): a worker flags an iteration when its
//    total gradient norm changed by a relative delta or more since the previous iteration (the
//    first iteration always flags).
// Arithmetic is in double and in the order written here; tools/record_training.py computes the
// same way, so a recorded trace is reproduced bit for bit.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace ddlsim::models {

struct EventTriggerSettings {
  bool adaptive = true;          // false: constant threshold `value`
  double value = 0;              // constant threshold (norm units)
  double horizon = 1;            // adaptive: the factor applied to the threshold every pass
  int initial_comm_passes = 30;  // passes p = 1 .. initial_comm_passes - 1 always send (p < P)
  [[nodiscard]] bool operator==(const EventTriggerSettings&) const = default;
};

/// One tensor's sender state.
class EventTrigger {
 public:
  explicit EventTrigger(const EventTriggerSettings& settings) : s_(settings) {}
  /// Pass p (= iteration + 1, p >= 1) with the tensor's current norm: true when it is sent.
  bool step(int pass, double norm);
  /// The threshold the last step() tested against.
  [[nodiscard]] double threshold() const { return thres_; }

 private:
  EventTriggerSettings s_;
  double thres_ = 0;
  double last_sent_norm_ = 0;
  double last_sent_pass_ = 0;
  std::array<double, 2> slopes_{0, 0};
};

/// sqrt of the sum of squares of per-tensor norms, summed in order (a worker's total gradient norm).
double total_norm(const double* norms, std::size_t count);

/// The `m` ranks with the largest `norms` (ties: lower rank first), as a 0/1 flag per rank.
std::vector<char> ordered_selection(const std::vector<double>& norms, int m);

/// One worker's SelSync state.
class SelSyncTrigger {
 public:
  explicit SelSyncTrigger(double delta) : delta_(delta) {}
  /// The worker's total gradient norm of the next iteration: true when it flags.
  bool step(double total_grad_norm);

 private:
  double delta_;
  double previous_ = -1;  // < 0: no previous iteration
};

}  // namespace ddlsim::models
