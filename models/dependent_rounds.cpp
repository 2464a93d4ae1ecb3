#include "models/dependent_rounds.hpp"

#include <utility>

namespace ddlsim::models {
namespace {

/// The steps of several sources, one source after the other.
class ChainedSource final : public StepSource {
 public:
  explicit ChainedSource(std::vector<std::unique_ptr<StepSource>> parts) : parts_(std::move(parts)) {}
  bool next(RankStep& step) override {
    for (; current_ < parts_.size(); ++current_)
      if (parts_[current_]->next(step)) return true;
    return false;
  }
  [[nodiscard]] std::size_t held() const override {
    return current_ < parts_.size() ? parts_[current_]->held() : 0;
  }

 private:
  std::vector<std::unique_ptr<StepSource>> parts_;
  std::size_t current_ = 0;
};

}  // namespace

int collective_calls(const Collective& algorithm, double bytes) {
  const auto* rounds = dynamic_cast<const DependentRounds*>(&algorithm);
  return rounds != nullptr ? static_cast<int>(rounds->compressor_->rounds(bytes).size()) : 1;
}

DependentRounds::DependentRounds(std::shared_ptr<const Collective> inner, std::shared_ptr<const Compressor> compressor)
    : inner_(std::move(inner)), compressor_(std::move(compressor)) {}

DependentRounds::DependentRounds(std::vector<const Collective*> per_round, std::shared_ptr<const Compressor> compressor)
    : per_round_(std::move(per_round)), compressor_(std::move(compressor)) {}

const Collective& DependentRounds::round_algorithm(std::size_t round) const {
  return per_round_.empty() ? *inner_ : *per_round_.at(round);
}

double DependentRounds::analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const {
  const auto rounds = compressor_->rounds(bytes);
  double t = 0;
  for (std::size_t r = 0; r < rounds.size(); ++r) t += round_algorithm(r).analytic_time_s(group, rounds[r], ab);
  return t;
}

std::vector<RankStep> DependentRounds::rank_schedule(int rank, const CollectiveGroup& group, double bytes) const {
  std::vector<RankStep> out;
  const auto rounds = compressor_->rounds(bytes);
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    auto steps = round_algorithm(r).rank_schedule(rank, group, rounds[r]);
    out.insert(out.end(), std::make_move_iterator(steps.begin()), std::make_move_iterator(steps.end()));
  }
  return out;
}

std::vector<RankStep> DependentRounds::rank_phases(int rank, const CollectiveGroup& group, double bytes) const {
  std::vector<RankStep> out;  // rounds are not merged with each other: they are separate messages
  const auto rounds = compressor_->rounds(bytes);
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    auto steps = round_algorithm(r).rank_phases(rank, group, rounds[r]);
    out.insert(out.end(), std::make_move_iterator(steps.begin()), std::make_move_iterator(steps.end()));
  }
  return out;
}

std::unique_ptr<StepSource> DependentRounds::rank_steps(int rank, const CollectiveGroup& group, double bytes) const {
  std::vector<std::unique_ptr<StepSource>> parts;
  const auto rounds = compressor_->rounds(bytes);
  for (std::size_t r = 0; r < rounds.size(); ++r) parts.push_back(round_algorithm(r).rank_steps(rank, group, rounds[r]));
  return std::make_unique<ChainedSource>(std::move(parts));
}

const Collective& DependentRounds::resolve(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const {
  if (!per_round_.empty()) return *this;
  std::vector<const Collective*> picks;
  for (const double b : compressor_->rounds(bytes)) picks.push_back(&models::resolve(*inner_, group, b, ab));
  bool plain = true;
  for (const auto* p : picks) plain = plain && p == inner_.get();
  if (plain) return *this;
  auto& slot = resolved_[picks];
  if (!slot) slot.reset(new DependentRounds(picks, compressor_));
  return *slot;
}

std::string DependentRounds::resolved_name(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const {
  if (!per_round_.empty()) return {};
  std::string out;
  for (const double b : compressor_->rounds(bytes)) {
    auto name = models::resolved_name(*inner_, group, b, ab);
    if (name.empty()) return {};  // a plain inner algorithm: its own name
    if (out.empty() || out != name) out = out.empty() ? name : out + ", then " + name;
  }
  return out;
}

std::optional<CollectiveChoice> DependentRounds::choice(const CollectiveGroup& group, double bytes,
                                                        const AlphaBeta& ab) const {
  if (!per_round_.empty()) return std::nullopt;
  std::optional<CollectiveChoice> out;
  for (const double b : compressor_->rounds(bytes)) {
    auto c = models::choice(*inner_, group, b, ab);
    if (!c) return std::nullopt;
    if (!out) {
      out = c;
    } else {
      if (out->algorithm != c->algorithm) out->algorithm += ", then " + c->algorithm;
      out->estimated_s += c->estimated_s;
    }
  }
  if (out) out->basis += " (per dependent round)";
  return out;
}

}  // namespace ddlsim::models
