#include "models/collective.hpp"

#include <algorithm>

namespace ddlsim::models {

std::vector<RankStep> merge_steps(std::vector<RankStep> steps) {
  std::vector<RankStep> out;
  auto same_pattern = [](const RankStep& a, const RankStep& b) {
    if (a.ops.size() != b.ops.size()) return false;
    for (std::size_t i = 0; i < a.ops.size(); ++i)
      if (a.ops[i].kind != b.ops[i].kind || a.ops[i].peer != b.ops[i].peer) return false;
    return true;
  };
  for (auto& step : steps) {
    if (!out.empty() && same_pattern(out.back(), step)) {
      for (std::size_t i = 0; i < step.ops.size(); ++i) out.back().ops[i].bytes += step.ops[i].bytes;
      out.back().latency_steps += step.latency_steps;
    } else {
      out.push_back(std::move(step));
    }
  }
  return out;
}

std::vector<RankStep> Collective::rank_phases(int rank, const CollectiveGroup& group, double bytes) const {
  return merge_steps(rank_schedule(rank, group, bytes));
}

const Collective& resolve(const Collective& collective, const CollectiveGroup& group, double bytes,
                          const AlphaBeta& ab) {
  const auto* selector = dynamic_cast<const CollectiveSelector*>(&collective);
  return selector != nullptr ? selector->resolve(group, bytes, ab) : collective;
}

std::string resolved_name(const Collective& collective, const CollectiveGroup& group, double bytes,
                          const AlphaBeta& ab) {
  const auto* selector = dynamic_cast<const CollectiveSelector*>(&collective);
  return selector != nullptr ? selector->resolved_name(group, bytes, ab) : std::string();
}

std::optional<CollectiveChoice> choice(const Collective& collective, const CollectiveGroup& group, double bytes,
                                       const AlphaBeta& ab) {
  const auto* selector = dynamic_cast<const CollectiveSelector*>(&collective);
  return selector != nullptr ? selector->choice(group, bytes, ab) : std::nullopt;
}

}  // namespace ddlsim::models

namespace ddlsim::models {

double AlphaBeta::step_on(double alpha, double beta, double bytes, double concurrent) const {
  double latency = alpha;
  double transfer = concurrent * bytes * beta;
  if (software && !software->ideal()) {
    const SoftwareCost::Message m = software->message(bytes, alpha, beta);
    latency = software->send_overhead_s + software->recv_overhead_s + m.latency_s;
    transfer = bytes * std::max(concurrent * m.wire_per_byte_s, m.per_byte_s);
  }
  switch (part) {
    case Part::LATENCY: return latency;
    case Part::TRANSFER: return transfer;
    case Part::ALL: break;
  }
  return latency + transfer;
}

}  // namespace ddlsim::models
