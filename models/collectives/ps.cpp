// Parameter server: push/pull of the whole gradient over S sharded servers.
//
// Ranks 0..N-1 are workers, N..N+S-1 servers (S = group.servers >= 1; S = 1 is
// the single server). Step 1 (push): every worker sends M/S bytes to every
// server at once; every server receives from all workers at once. Step 2
// (pull): every server sends M/S bytes back to every worker at once.
//
// Closed form on the reference platform (star, full-duplex NIC of bandwidth
// 1/beta per host, path latency alpha, max-min fair sharing). In the push all
// N*S flows start together; worker uplinks carry S flows each, server
// downlinks N flows each. Progressive filling raises every flow to
// 1/(beta max(N, S)), where the busier side saturates; every flow crosses one
// such link, so all flows get that rate and end together at
// alpha + (M/S) beta max(N, S). The pull is the mirror image:
//
//     T_ps(N, S, M) = 2 alpha + 2 max(N/S, 1) M beta
//
// S = 1 gives 2 alpha + 2 N M beta (Tyagi & Swany 2023 state 2 alpha +
// 2 (N-1) M beta, counting a server co-located with a worker; here servers are
// separate hosts). N = 1 is not free, unlike the worker-only algorithms: the
// lone worker still pushes its gradient to the servers and pulls the
// parameters back. Its S push flows share its uplink (M/S each at 1/(beta S)),
// so the push costs alpha + M beta, the pull the same:
// T_ps(1, S, M) = 2 alpha + 2 M beta, the general form with max(1/S, 1) = 1.
// Sources: Li et al., "Scaling distributed machine learning with the parameter
// server", OSDI 2014; Tyagi & Swany 2023 (PS/ring/tree table).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

#include <algorithm>
#include <stdexcept>

namespace ddlsim::models {
namespace {

using detail::recv_from;
using detail::send_to;

void require_servers(const CollectiveGroup& group) {
  if (group.servers < 1) throw std::invalid_argument("ps: the group has no parameter server (servers must be >= 1)");
}

class ParameterServer final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "allreduce"; }
  [[nodiscard]] bool uses_servers() const override { return true; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    require_servers(group);
    const double n = group.workers;
    const double s = group.servers;
    return 2 * ab.step_s(bytes / s, std::max(n, s));
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n < 1 || rank < 0 || rank >= group.size()) return {};
    require_servers(group);
    const double shard = bytes / group.servers;
    RankStep first, second;
    if (rank < n) {
      for (int s = 0; s < group.servers; ++s) first.ops.push_back(send_to(n + s, shard));
      for (int s = 0; s < group.servers; ++s) second.ops.push_back(recv_from(n + s, shard));
    } else {
      for (int w = 0; w < n; ++w) first.ops.push_back(recv_from(w, shard));
      for (int w = 0; w < n; ++w) second.ops.push_back(send_to(w, shard));
    }
    return {first, second};
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "ps",
                "parameter server push/pull over S sharded servers: 2 steps, 2a + 2 max(N/S,1) M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::ParameterServer>(); })
