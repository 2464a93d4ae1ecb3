// ddlsim: the co-simulated training of a run (training.convergence): convergence.csv, streamed as
// evaluations happen, and summary.json's "convergence" (docs/outputs.md).
#pragma once

#include "scenario/convergence_spec.hpp"
#include "scenario/scenario.hpp"
#include "engine/iteration_records.hpp"
#include "engine/simulation.hpp"
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

  /// Iteration `k` complete; `end_s`: when its last worker ended it.
  void iteration(int k, double end_s);
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
