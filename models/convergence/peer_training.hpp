// ddlsim: the numerics of decentralised training, run live by the sync model's worker loops as
// the simulation runs (training.convergence with gossip or event_triggered; docs/convergence.md).
//
// Every worker w holds its own parameters x_w (all start at the classifier's initial vector).
// Its worker loop calls, in simulated time order:
//   gradient(w)            g_w = the mean gradient at x_w of w's next batch (its own shard);
//   step(w)                x_w <- x_w - lr g_w;
//   norm(w, t)             ||x_w[t]||_2 of tensor t (an event rule's input, seed 000);
//   publish(w, t, v, R)    the value of x_w[t] now is what w sends as version v to receivers R;
//   mix(w, t, got)         x_w[t] <- (x_w[t] + sum of the received values) / (1 + |got|), where
//                          `got` lists (peer, version) as the simulation delivered them -- the
//                          newest arrived put, or the message of the iteration -- version -1
//                          meaning nothing received from that peer yet: the shared initial model
//                          (AD-PSGD), or zeros where the receiver's window starts zeroed
//                          (EventGraD's code initialises its MPI window to 0);
//   iteration_end(w, k, t) w ended iteration k at simulated time t.
// t = WHOLE is the whole parameter vector (gossip's one message); 0 .. tensors()-1 the
// classifier's tensors (event_triggered's messages, Classifier::tensors).
//
// The model evaluated at iteration k is the mean of the workers' parameters each after its own
// iteration k (Lian et al., NeurIPS 2017, analyse that average), at the time the last worker ended
// k; on the test split, every evaluate_every_iterations-th iteration and the last.
//
// Sent values are kept until no receiver can read them any more: a receiver only ever reads the
// newest value that has arrived, so once it has read version v, the older ones are dead to it.
#pragma once

#include "models/convergence/cosimulation.hpp"

#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace ddlsim::models::convergence {

class PeerTraining {
 public:
  static constexpr int WHOLE = -1;
  /// `sim` supplies the data, batches and model (its rule is unused); points go to `on_point`, in
  /// iteration order.
  PeerTraining(CoSimulation& sim, int workers, int iterations, std::function<void(const Point&)> on_point);

  [[nodiscard]] int tensors() const { return static_cast<int>(tensors_.size()); }
  /// Tensor t's elements (WHOLE: all parameters).
  [[nodiscard]] Eigen::Index elements(int t) const;

  void gradient(int w);
  void step(int w);
  [[nodiscard]] double norm(int w, int t) const;
  void publish(int w, int t, std::int64_t version, const std::vector<int>& receivers);
  enum class Unheard { INITIAL, ZERO };
  void mix(int w, int t, const std::vector<std::pair<int, std::int64_t>>& got, Unheard unheard = Unheard::INITIAL);
  void iteration_end(int w, int k, double time_s);

  [[nodiscard]] const Vector& parameters(int w) const { return x_[static_cast<std::size_t>(w)]; }
  /// Sent values kept now (for tests: they must not pile up).
  [[nodiscard]] std::size_t kept() const;

 private:
  struct Sent {
    Vector value;
    std::vector<int> readers;  // receivers that may still read it
  };
  struct Pending {  // an evaluation iteration, until every worker has ended it
    Vector sum;
    int count = 0;
    double time_s = 0;
  };
  [[nodiscard]] std::pair<Eigen::Index, Eigen::Index> range(int t) const;
  [[nodiscard]] std::size_t slot(int w, int t) const;

  CoSimulation& sim_;
  int n_, iterations_;
  std::function<void(const Point&)> on_point_;
  std::vector<Classifier::Tensor> tensors_;
  Vector initial_;
  std::vector<Vector> x_, g_;
  std::vector<std::map<std::int64_t, Sent>> sent_;  // per (sender, tensor slot)
  std::map<int, Pending> pending_;
  double loss_sum_ = 0, loss_samples_ = 0;
};

}  // namespace ddlsim::models::convergence
