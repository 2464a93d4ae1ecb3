// ddlsim: the scenario's "training.convergence" (scenario/scenario_convergence.cpp;
// docs/convergence.md): a real model trained on a real dataset as the simulation runs.
#pragma once

#include "models/convergence/cosimulation.hpp"
#include "scenario/scenario.hpp"

#include <memory>
#include <vector>

namespace ddlsim::sim {

struct ConvergenceSpec {
  models::convergence::Settings settings;
  models::convergence::Rule rule;
  models::convergence::Compression compression;  // its bucket_bytes filled from the plan at the run
  std::shared_ptr<const models::convergence::Dataset> data;
  /// selective_sync with "decisions": "live": whether each iteration synchronises, from the
  /// co-simulated training run once at load (the sync model replays them).
  std::vector<char> decisions;
};

/// Reads "training.convergence" (`value`, at /training/convergence; null: absent) once the sync
/// model, the compressor and the batch are known; loads its dataset. Without it, refuses what needs
/// it (event_triggered's "decisions": "live").
std::shared_ptr<const ConvergenceSpec> read_convergence(const json* value, const Scenario& s);

}  // namespace ddlsim::sim
