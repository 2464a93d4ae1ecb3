// ddlsim: the co-simulated training of a run (training.convergence): convergence.csv, streamed as
// evaluations happen, and summary.json's "convergence" (docs/outputs.md).
#pragma once

#include "scenario/convergence_spec.hpp"
#include "scenario/scenario.hpp"
#include "engine/iteration_records.hpp"
#include "engine/simulation.hpp"
#include "models/adaptive_compression.hpp"
#include "models/convergence/peer_training.hpp"

#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::analysis {

class ConvergenceOutputs {
 public:
  /// `open`: opens the staged convergence.csv (RunOutputs does, so that the file is put in place with the others).
  ConvergenceOutputs(const sim::Scenario& scenario, std::function<std::ofstream&()> open);

  /// Iteration `k` complete; `end_s`: when its last worker ended it; `row`: what its gradients ran
  /// (adaptive compression's ratio, and whether it explored).
  void iteration(int k, double end_s, const sim::IterationCompression& row);
  /// Adaptive compression with "gain_model": "live": each iteration's gain, recorded as its numerics
  /// run (RunOptions::live_gains); null otherwise.
  [[nodiscard]] const models::LiveGains* live_gains() const { return live_ ? &*live_ : nullptr; }
  /// Gossip and event_triggered: the training their worker loops drive (RunOptions::peer_training);
  /// null for the other sync models.
  [[nodiscard]] models::convergence::PeerTraining* peer_training() { return peer_.get(); }
  /// After the run: a parameter-server model's numerics, replayed from `result.updates`.
  void finish(const sim::SimulationResult& result);
  /// summary.json's "convergence".
  [[nodiscard]] nlohmann::json summary() const;
  /// The run table's lines.
  [[nodiscard]] std::string table() const;

 private:
  const sim::Scenario& scenario_;
  std::function<std::ofstream&()> open_;
  models::convergence::CoSimulation sim_;
  std::unique_ptr<models::convergence::PeerTraining> peer_;
  std::optional<models::LiveGains> live_;
  /// Adaptive compression's exploration: the checkpoint it explores from and returns to, and the
  /// candidate that ran the last explored iteration.
  std::shared_ptr<const models::convergence::CoSimulation::Snapshot> checkpoint_;
  int exploring_candidate_ = -1;
  void explore(int k, double end_s, const sim::IterationCompression& row, bool last);
  void add(const models::convergence::Point& p);
  std::vector<models::convergence::AsyncEvaluation> async_evaluations_;
  int since_eval_ = 0;
  int evaluations_ = 0;
  /// The bsp baseline of a relaxed model (Settings::bsp_baseline), and when it reached the target.
  std::optional<models::convergence::CoSimulation> bsp_;
  std::optional<models::convergence::Point> bsp_reached_;
  std::optional<models::convergence::Point> last_, best_, reached_;  // reached_: the first at the target
};

/// When the last of `records` ended.
double last_end_s(const std::vector<sim::IterationRecord>& records);

}  // namespace ddlsim::analysis
