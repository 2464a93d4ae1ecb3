#include "models/collective.hpp"

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

}  // namespace ddlsim::models
