// ddlsim: the numerics of parameter-server training (asp, ssp), replayed in the order the
// simulation applied the updates (docs/convergence.md, "Parameter servers").
//
// The simulation logs every update a server applies: when, which server and bucket (a shard of the
// parameters), the shard's version after it, and the gradients it applied (worker, iteration, and
// the version of this shard the worker had pulled when it computed them). A worker computes
// iteration i on the parameters it pulled during iteration i - 1, whose version of every shard
// its pushes of iteration i carry; so the replay knows, for every gradient, the exact parameters
// it was computed on. Shards map onto the flat parameter vector in order: bucket b covers its
// share of the gradient bytes, and server s the s-th of S equal parts of it.
//
// In application order (the simulation's): the first update that carries gradient (w, i) computes
// it -- worker w's next batch, on the parameters assembled from every shard at the version (w, i)
// saw -- and every update applies its gradients' slices to its shard, theta_shard <- theta_shard -
// lr sum g (each worker's gradient counts once, as a server applies it: Hogwild-style ASP; ssp's
// batched step sums the gradients it takes). Old versions of a shard are kept while a gradient
// still to be computed needs them.
#pragma once

#include "models/convergence/cosimulation.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::models::convergence {

struct AppliedGradient {
  int worker = 0;
  int iteration = 0;
  std::int64_t seen_version = 0;  // the version of this shard the gradient was computed on
};

struct Update {
  double time_s = 0;
  int server = 0;
  int bucket = 0;
  std::int64_t version_after = 0;
  std::vector<AppliedGradient> gradients;
};

/// Replays `updates` (in application order) on `sim`'s data and model. `bucket_bytes`: the plan's
/// buckets; `servers`: S. Evaluates the servers' parameters at each `eval_times_s` (with the
/// iteration each belongs to), after every update applied by then, and at the end.
struct AsyncEvaluation {
  int iteration = 0;
  double time_s = 0;
};
std::vector<Point> replay_updates(CoSimulation& sim, const std::vector<Update>& updates,
                                  const std::vector<double>& bucket_bytes, int servers,
                                  const std::vector<AsyncEvaluation>& evaluations);

}  // namespace ddlsim::models::convergence
