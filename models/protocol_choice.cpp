#include "models/protocol_choice.hpp"

#include <limits>

namespace ddlsim::models {

AlphaBeta with_software(AlphaBeta ab, std::shared_ptr<const SoftwareCost> software) {
  ab.software = std::move(software);
  return ab;
}

CallProtocol call_protocol(const Collective& algo, const CollectiveGroup& group, double bytes, const AlphaBeta& ab,
                           double call_cost_s, bool call_cost_given) {
  if (!ab.software || ab.software->protocols.empty()) return {ab.software, call_cost_s};
  CallProtocol best;
  double least = std::numeric_limits<double>::infinity();
  const AlphaBeta whole = ab.only(AlphaBeta::Part::ALL);
  for (const auto& p : ab.software->protocols) {
    const double call = call_cost_given ? call_cost_s : p->call_cost_s.value_or(call_cost_s);
    const double t = call + algo.analytic_time_s(group, bytes, with_software(whole, p));
    if (t < least) {
      least = t;
      best = {p, call};
    }
  }
  return best;
}

}  // namespace ddlsim::models
