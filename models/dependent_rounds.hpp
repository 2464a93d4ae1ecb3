// ddlsim: a gradient collective sent in dependent rounds (models/compressor.hpp, rounds()).
//
// PowerSGD (Vogels et al., NeurIPS 2019, Algorithm 1) all-reduces P, computes Q from the reduced
// P and all-reduces Q: two collectives one after the other, each paying its own latency terms.
// DependentRounds runs the scenario's all-reduce once per round with that round's bytes: the
// closed form is the sum of the rounds' closed forms, and a rank's schedule is its schedule of
// round 1 followed by its schedule of round 2 (a rank starts Q once its own P is reduced).
#pragma once

#include "models/collective.hpp"
#include "models/compressor.hpp"

#include <map>
#include <memory>
#include <vector>

namespace ddlsim::models {

/// The library calls one collective call of `algorithm` for `bytes` makes: its rounds under
/// DependentRounds (each round is an all-reduce of its own, with its own launch), else 1.
int collective_calls(const Collective& algorithm, double bytes);

class DependentRounds final : public Collective, public CollectiveSelector {
 public:
  /// `inner` runs every round; `compressor` splits a call's bytes into rounds.
  DependentRounds(std::shared_ptr<const Collective> inner, std::shared_ptr<const Compressor> compressor);
  [[nodiscard]] std::string operation() const override { return inner_->operation(); }
  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override;
  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group, double bytes) const override;
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group, double bytes) const override;
  [[nodiscard]] std::unique_ptr<StepSource> rank_steps(int rank, const CollectiveGroup& group, double bytes) const override;
  [[nodiscard]] std::string resolved_name(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override;
  [[nodiscard]] std::optional<CollectiveChoice> choice(const CollectiveGroup& group, double bytes,
                                                       const AlphaBeta& ab) const override;
  /// A meta inner ("auto") picks per round; the result runs those picks round after round.
  [[nodiscard]] const Collective& resolve(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override;

 private:
  /// The collective each round runs (the inner one, or what it resolves to for that round's bytes).
  DependentRounds(std::vector<const Collective*> per_round, std::shared_ptr<const Compressor> compressor);
  [[nodiscard]] const Collective& round_algorithm(std::size_t round) const;
  friend int collective_calls(const Collective& algorithm, double bytes);

  std::shared_ptr<const Collective> inner_;
  std::vector<const Collective*> per_round_;  // empty: inner_ for every round
  std::shared_ptr<const Compressor> compressor_;
  mutable std::map<std::vector<const Collective*>, std::unique_ptr<DependentRounds>> resolved_;
};

}  // namespace ddlsim::models
