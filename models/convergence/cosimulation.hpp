// ddlsim: training numerics inside the simulation (training.convergence, docs/convergence.md).
//
// A real model (classifier.hpp) is trained on a real dataset (dataset.hpp) as the simulation runs:
// the simulation says when each iteration ends, the co-simulation applies what the sync model
// does to the parameters in that iteration, and evaluates the model on the test split, so that
// accuracy and loss are known against simulated wall-clock time.
//
// Data. Each worker owns a shard of the training split: `iid`, a seeded permutation dealt in
// equal parts; `by_label`, the split sorted by label, cut into 2N equal pieces and two pieces dealt
// to each worker at random (McMahan et al., AISTATS 2017: most workers then see two classes). A
// worker takes its batches of b samples (the scenario's batch_size) from a fresh seeded
// permutation of its shard each epoch of it, in order.
//
// Per sync model (`rule_for`):
//   * bsp: iteration k averages the N workers' gradients on their k-th batches and steps once,
//     theta <- theta - lr * (1/N) sum_w g_w(theta). With equal batches that is the gradient of the
//     union batch, which is what is computed: one step on N b samples, not N steps.
//   * local_sgd (period H, warm-up K): iterations below K as bsp; after, each worker steps its own
//     copy on its own batch, and at the end of every H-th iteration the copies are replaced by their
//     mean (the all-reduce the simulation timed). The model is evaluated where the copies agree.
//   * asp, ssp: replayed from the servers' updates after the run (async_replay.hpp).
//   * gossip, event_triggered: each worker's own copy, stepped and mixed live by the sync model's
//     worker loop with the messages the simulation delivered (peer_training.hpp).
//   * selective_sync (SelSync): each worker steps its own copy; a worker flags the iteration when
//     its gradient norm changed by delta or more (models/trigger_rules.hpp); when any did, the
//     copies are replaced by their mean. The decisions do not depend on time, so they are computed
//     before the run (step()) and the simulation replays them.
//   * ordered_gradients (seed 003): every worker's gradient at the servers' parameters; the m with
//     the largest norms (ties: the lower rank; models/trigger_rules.hpp) are averaged and applied.
//     Decisions computed before the run, as selective_sync's.
// Other sync models are refused (scenario/scenario_convergence.cpp says which run).
//
// Costs: bsp N b samples' forward and backward per iteration, once; local SGD the same, spread over
// N copies; an evaluation the test split's forward.
#pragma once

#include "models/convergence/classifier.hpp"
#include "models/convergence/compression.hpp"
#include "models/trigger_rules.hpp"
#include "models/convergence/dataset.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::models::convergence {

enum class Shards { IID, BY_LABEL };

struct Settings {
  std::string dataset = "fashion_mnist";
  int hidden_units = 0;  // 0: softmax regression
  double learning_rate = 0.1;
  Shards shards = Shards::IID;
  double target_accuracy = 0.8;      // fraction of the test split
  int evaluate_every_iterations = 1; // and the last iteration
  std::int64_t train_samples = 0;    // 0: the whole split
  std::int64_t test_samples = 0;
  /// Relaxed models (local SGD, asp, ssp): also train bsp on the same data, batches and seed, for
  /// the statistical efficiency relative to it.
  bool bsp_baseline = true;
  /// bsp: measure the gradient noise scale B_simple = tr(Sigma) / |G|^2 (McCandlish et al., "An
  /// empirical model of large-batch training", 2018, Appendix A.1) from every iteration's N worker
  /// gradients (batch b) and their mean (batch N b); reported at each evaluation over the iterations
  /// since the previous one (the ratio of the two sums, as the paper averages numerator and
  /// denominator separately).
  bool noise_scale = false;
};

/// What the sync model does to the parameters (see the header).
struct Rule {
  /// ASYNC: asp and ssp, replayed from the servers' updates once the run is over (async_replay.hpp).
  /// PEER: gossip and event_triggered, driven live by the worker loops (peer_training.hpp).
  /// SELSYNC: selective_sync, the copies averaged in the iterations where a worker flagged.
  /// ORDERED: ordered_gradients, the mean of the m largest-norm workers' gradients per step.
  enum class Kind { BSP, LOCAL_SGD, ASYNC, PEER, SELSYNC, ORDERED } kind = Kind::BSP;
  int period = 1;  // local_sgd: H
  int warmup = 0;  // local_sgd: K
  double delta = 0;  // selective_sync: a worker flags when its gradient norm changed by this fraction
  int m = 1;         // ordered_gradients: the workers whose gradients are applied
  /// True when iteration k ends with every worker holding the same parameters.
  [[nodiscard]] bool synchronised_after(int k) const {
    return kind == Kind::BSP || (kind == Kind::LOCAL_SGD && (k < warmup || (k - warmup + 1) % period == 0));
  }
};

/// One evaluation of the model.
struct Point {
  int iteration = 0;      // after this iteration (0-based)
  double time_s = 0;      // when its last worker ended it (simulated)
  double epochs = 0;      // samples consumed over the training split's size
  double train_loss = 0;  // mean over the batches since the previous evaluation
  double test_loss = 0;
  double test_accuracy = 0;
  /// Settings::noise_scale: B_simple over the iterations since the previous evaluation (samples);
  /// NaN when not measured or when the estimate of |G|^2 was not positive.
  double gradient_noise_scale = std::numeric_limits<double>::quiet_NaN();
};

class CoSimulation {
 public:
  CoSimulation(std::shared_ptr<const Dataset> data, const Settings& settings, Rule rule, int workers,
               std::int64_t batch_per_worker, std::uint64_t seed, Compression compression = {});

  /// Iteration `k` (every worker has ended it, the last at `end_s`): the parameters after it, and
  /// an evaluation when one falls here (every evaluate_every_iterations-th synchronised iteration,
  /// and `last` when synchronised).
  std::optional<Point> iteration(int k, double end_s, bool last);
  /// Iteration k's numerics without an evaluation: true when it ends with the copies averaged
  /// (selective_sync's decisions, computed before the run: scenario/scenario_convergence.cpp).
  bool step(int k);
  /// ordered_gradients: which workers the last step() selected (one flag per worker).
  [[nodiscard]] const std::vector<char>& selected() const { return selected_; }

  /// Under a compressor: the kept fraction from the next iteration on (adaptive compression), and
  /// the last iteration's compression gain (compression.hpp); 1 without one.
  void set_compression_ratio(double ratio);
  [[nodiscard]] double compression_gain() const { return compression_ ? compression_->last_gain() : 1.0; }

  /// The training's state (parameters, the workers' batch positions, the compressor's memory, the
  /// loss since the last evaluation): adaptive compression explores candidates from it and returns
  /// to it (seed 002 explores from a checkpoint and restores it).
  struct Snapshot;
  [[nodiscard]] std::shared_ptr<const Snapshot> snapshot() const;
  void restore(const Snapshot& s);
  /// A fresh compressor memory (residuals zero): seed 002 builds a new compressor per candidate.
  void clear_compression_memory();
  /// An evaluation of the model now, as after iteration k ended at `end_s`.
  Point evaluate_now(int k, double end_s);

  [[nodiscard]] const Classifier& classifier() const { return model_; }
  [[nodiscard]] const Vector& parameters() const { return workers_theta_.front(); }
  /// Worker w's next batch of sample indices (advances its position); for tests.
  std::vector<std::uint32_t> next_batch(int w);
  [[nodiscard]] const std::vector<std::vector<std::uint32_t>>& shards() const { return shards_; }

  // For the replay of parameter-server training (async_replay.cpp):
  /// Worker w's mean gradient on its next batch at `theta`, into `grad`; the batch's summed loss.
  double worker_gradient(int w, const Vector& theta, Vector& grad);
  [[nodiscard]] Classifier::Score evaluate(const Vector& theta) const;
  [[nodiscard]] Vector initial() const { return model_.initial(seed_); }
  [[nodiscard]] const Settings& settings() const { return settings_; }
  [[nodiscard]] std::int64_t batch() const { return batch_; }
  [[nodiscard]] std::size_t train_size() const { return data_->train_size(); }

 private:
  void step_union();   // bsp
  void step_measured();  // bsp with Settings::noise_scale: the N worker gradients, then their mean
  void step_compressed(int k);  // bsp under a compressor: each worker's gradient compressed (compression.hpp)
  void step_local();   // every worker on its own copy; selective_sync: sets flagged_
  void average();
  [[nodiscard]] Matrix rows(const std::vector<std::uint32_t>& idx, const std::vector<float>& x) const;

  std::shared_ptr<const Dataset> data_;
  Settings settings_;
  Rule rule_;
  int n_;
  std::int64_t batch_;
  std::uint64_t seed_;
  Classifier model_;
  std::optional<GradientCompression> compression_;  // bsp under a compressor
  std::vector<Vector> workers_theta_;  // one copy (bsp, synchronised) or one per worker
  std::vector<std::vector<std::uint32_t>> shards_;
  struct Cursor {
    std::vector<std::uint32_t> order;
    std::size_t at = 0;
    std::int64_t epoch = 0;
  };
  std::vector<Cursor> cursors_;
  Matrix test_x_;
  double loss_sum_ = 0;
  double loss_samples_ = 0;
  double samples_ = 0;
  int since_eval_ = 0;
  std::vector<SelSyncTrigger> triggers_;  // selective_sync: per worker
  bool flagged_ = false;                  // selective_sync: a worker flagged this iteration
  std::vector<char> selected_;            // ordered_gradients: the last step's selection
  void step_ordered();
  double noise_trace_sum_ = 0, noise_norm_sum_ = 0;  // Settings::noise_scale: tr(Sigma), |G|^2 estimates
};

/// Worker shards of `n` training samples with labels `labels` (see the header).
std::vector<std::vector<std::uint32_t>> make_shards(const std::vector<std::uint8_t>& labels, int workers, Shards kind,
                                                    std::uint64_t seed);

}  // namespace ddlsim::models::convergence
