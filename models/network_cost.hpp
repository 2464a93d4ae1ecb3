// ddlsim: a contention-aware cost of a collective's schedule on a routed network.
//
// The closed forms (analytic_time_s) are exact on the reference star, where a
// flow shares only its two NICs. On any other fabric flows also share switch
// links, and an algorithm's cost depends on how its transfers land on them:
// `direct` puts N-1 flows per NIC and, on a fat tree with one path per pair,
// dozens on a core link, while a ring puts one flow on each link direction.
// A NetworkCost, held by CollectiveGroup::network_cost, prices a schedule on the
// group's platform; "auto" picks by it when the group has one.
//
// ContentionCost evaluates every rank's schedule -- rank_schedule, or rank_phases
// for the pipelined granularity (ScheduleForm) -- on a routed network:
//
//   * Transfers: the k-th SEND from a to b is matched with the k-th RECV from a
//     at b (as sim/'s per-pair FIFO mailboxes do).
//   * Rounds: a rank's first step is posted in round 0; a transfer runs in round
//     max(round its sender's step was posted, round its receiver's was posted);
//     a step is done in the last round of its transfers, and the rank's next step
//     is posted one round later (empty steps pass straight through). Transfers of
//     one round are the ones that run concurrently: on a ring every step is a
//     round, on `direct` the whole reduce-scatter is one round, and the member
//     steps of hierarchical wait for their leader's broadcast round.
//   * Duration of a transfer of b bytes in round k over the directed links P of
//     its route:   sum over l in P of latency(l)  +  b * max over l in P of n_k(l) / bandwidth(l)
//     with n_k(l) the number of round-k transfers whose route uses l (fair
//     sharing of the most loaded link on the path).
//   * Times: a transfer starts when both its steps are posted, i.e. when the
//     sender's and the receiver's previous steps are done; a step is done when
//     its last transfer ends (plus (latency_steps - 1) times its longest path
//     latency, for merged entries); the estimate is the time the last step is done.
//
// On a one-switch star with uniform links (route a -> b = {up(a), down(b)}, path
// latency alpha = 2 link latencies, beta = 1 / link bandwidth) n_k(l) is the
// number of sends (uplink) or receives (downlink) a rank posts in its round-k
// step, so a ring step costs alpha + (M/N) beta and a direct step alpha +
// (N-1)(M/N) beta: the estimate equals the closed forms (tests/models/
// network_cost_test.cpp checks every algorithm). It is not a max-min flow
// simulation: a flow keeps the share of its worst link for its whole duration,
// and rounds are a schedule's dependency levels, not measured overlap.
//
// Cost: O(transfers x hops) per (algorithm, group, bytes), memoised. Above
// `max_ranks` ranks, or when a schedule's transfers cross more than
// `max_flow_hops` links in total, time_s() gives up (nullopt) and the caller
// falls back to the closed forms, saying so.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace ddlsim::models {

class Collective;
struct SoftwareCost;
struct CollectiveGroup;

/// The cost of a collective's schedule on one platform.
class NetworkCost {
 public:
  virtual ~NetworkCost() = default;
  /// Estimated time of `algorithm` on `group` for `bytes` per rank; nullopt when the
  /// schedule is too large to evaluate (the caller then uses the closed forms).
  [[nodiscard]] virtual std::optional<double> time_s(const Collective& algorithm, const CollectiveGroup& group,
                                                     double bytes) const = 0;
};

/// Directed links and routes between the ranks of a group (workers 0..W-1, then servers).
struct NetworkPaths {
  int ranks = 0;                       // routes exist between ranks 0..ranks-1
  std::vector<double> bandwidth_Bps;   // per directed link id
  std::vector<double> latency_s;       // per directed link id
  /// The directed link ids a message from rank a to rank b crosses, in order.
  std::function<std::vector<int>(int a, int b)> route;
};

struct ContentionLimits {
  int max_ranks = 1024;
  std::int64_t max_flow_hops = 10'000'000;  // sum over a schedule's transfers of their route lengths
};

/// Which of an algorithm's schedules is priced: rank_schedule (stepwise granularity) or
/// rank_phases (pipelined: merged steps, far fewer transfers) -- the one the simulation runs.
enum class ScheduleForm { STEPWISE, PIPELINED };

class ContentionCost final : public NetworkCost {
 public:
  /// With `software` (models/software_cost.hpp), each transfer pays the library's costs as
  /// sim/'s executor charges them: overheads and handshake as latency, the window's rate cap.
  explicit ContentionCost(NetworkPaths paths, ContentionLimits limits = {},
                          ScheduleForm form = ScheduleForm::STEPWISE,
                          std::shared_ptr<const SoftwareCost> software = nullptr);

  [[nodiscard]] std::optional<double> time_s(const Collective& algorithm, const CollectiveGroup& group,
                                             double bytes) const override;

  /// The evaluation itself, without the memo (for tests and tools).
  [[nodiscard]] std::optional<double> evaluate(const Collective& algorithm, const CollectiveGroup& group,
                                               double bytes) const;

  [[nodiscard]] const ContentionLimits& limits() const { return limits_; }

 private:
  /// Route of a -> b from the memo (filled on first use); call with mutex_ held.
  const int* route(int a, int b, int& hops) const;

  NetworkPaths paths_;
  ContentionLimits limits_;
  ScheduleForm form_;
  std::shared_ptr<const SoftwareCost> software_;
  mutable std::mutex mutex_;  // guards the memos; not held while schedules are built
  // Memo keyed by (algorithm object, workers, servers, ranks_per_node, neighbours, bytes): the
  // algorithm object must outlive this cost's use with it (auto's candidates live as long as auto).
  using Key = std::tuple<const Collective*, int, int, int, const void*, double>;
  mutable std::map<Key, std::optional<double>> memo_;
  mutable std::vector<std::int64_t> route_start_;  // per (a, b): offset into route_links_, -1 = not yet routed
  mutable std::vector<int> route_length_;
  mutable std::vector<int> route_links_;
};

}  // namespace ddlsim::models
