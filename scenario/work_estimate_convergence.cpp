// ddlsim: the work estimate's term for the co-simulated training (scenario/work_estimate.hpp).
#include "scenario/convergence_spec.hpp"
#include "scenario/work_constants.hpp"
#include "scenario/work_estimate.hpp"

#include <algorithm>

namespace ddlsim::sim {

using namespace work;

/// Per iteration: the co-simulated training (training.convergence, docs/convergence.md): N b
/// samples' forward and backward (6 flops per sample and parameter), the test split's forward
/// every evaluate_every_iterations (2 per sample and parameter); memory for the data (loaded as
/// floats, the test split also as doubles), local SGD's N copies, the servers' update log, and the
/// decentralised models' copies, gradients and sent values.
std::optional<WorkTerm> convergence_work_term(const Scenario& s, double workers, double iterations, double buckets,
                                              double servers) {
  if (!s.training.convergence) return std::nullopt;
  const auto& conv = *s.training.convergence;
  const auto& d = *conv.data;
  const double params = static_cast<double>(
      models::convergence::Classifier(d.features, d.classes, conv.settings.hidden_units).parameters());
  const double samples = workers * static_cast<double>(s.workload.batch_size);
  const bool peers = conv.rule.kind == models::convergence::Rule::Kind::PEER;
  // gossip, event_triggered: each worker's step, norms and mix also touch its parameters a few times.
  const double flops = samples * params * NUMERICS_TRAIN_FLOPS + (peers ? workers * params * NUMERICS_MIX_FLOPS : 0) +
                       static_cast<double>(d.test_size()) * params * NUMERICS_EVAL_FLOPS / conv.settings.evaluate_every_iterations;
  const bool compressed = conv.compression.kind != models::convergence::Compression::Kind::NONE;
  const bool baseline = conv.settings.bsp_baseline && (conv.rule.kind != models::convergence::Rule::Kind::BSP || compressed);
  // A relaxed model's bsp baseline trains and evaluates as much again (until it reaches the target).
  // selective_sync's and ordered_gradients' live decisions: the same numerics once more, before the run.
  const bool ahead = conv.rule.kind == models::convergence::Rule::Kind::SELSYNC || conv.rule.kind == models::convergence::Rule::Kind::ORDERED;
  const double runs = (baseline ? 2 : 1) + (ahead ? 1 : 0);
  // Floats, the test split as doubles too, and the decompressed file while it is read (a byte per pixel).
  double memory = static_cast<double>(d.train_size() * 5 + d.test_size() * 13) * d.features;
  memory += std::min(samples, 4096.0) * d.features * 8;  // a union batch's chunk
  // A copy per worker (local SGD, selective_sync), or every worker's gradient at once (ordered_gradients).
  if (conv.rule.kind == models::convergence::Rule::Kind::LOCAL_SGD || ahead) memory += workers * params * 8;
  // Each worker's parameters and gradient, and the values it sent that a neighbour may still read.
  if (peers) memory += workers * params * 8 * PEER_COPIES;
  if (conv.rule.kind == models::convergence::Rule::Kind::ASYNC)  // the log, and versions kept for stale gradients
    memory += iterations * workers * buckets * servers * UPDATE_LOG_BYTES + workers * params * 8;
  if (baseline) memory += params * 8;
  // A compressor: the workers' gradients, what they send and the copies being compressed, and their residuals.
  if (compressed) memory += workers * params * 8 * (COMPRESSED_COPIES + (conv.compression.error_feedback ? 1 : 0));
  // A per-iteration term's memory is the run's (estimate_work adds it once).
  return WorkTerm{"co-simulated training", "/training/convergence", runs * flops / NUMERICS_FLOP_RATE, memory};
}

}  // namespace ddlsim::sim
