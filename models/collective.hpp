// ddlsim: the Collective interface -- every algorithm has two faces.
//
//  1. analytic_time_s(): the alpha-beta closed form (alpha = per-message path
//     latency in s, beta = s per byte of the bottleneck link).
//  2. rank_schedule(): the point-to-point transfers one rank performs, as a
//     list of steps. In a step the rank posts all its sends and receives at
//     once and waits for all of them; the next step starts when they are done.
//     sim/ executes these on the SimGrid platform (mailbox rendezvous: a
//     transfer starts when both its send and its receive are posted).
//
// Reference platform for the identity "simulated == closed form": a star
// where every host has one full-duplex NIC link (send and receive directions
// independent) of bandwidth 1/beta to a non-blocking switch, and host-to-host
// path latency alpha. Concurrent flows in the same NIC direction share it
// fairly; the closed form of each algorithm is exact for that platform.
//
// Ranks: 0..workers-1 are workers; workers..workers+servers-1 are parameter
// servers (only parameter-server algorithms use servers).
//
// Byte counts are doubles: fractional bytes are carried exactly in the model
// and quantised once by engine/ (docs/engine.md, "Fractional bytes").
#pragma once

#include "models/rank_steps.hpp"
#include "models/registry.hpp"
#include "models/software_cost.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::models {

/// One class of links: a message's path latency and the inverse bandwidth of its bottleneck.
struct LinkClass {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
};

struct AlphaBeta {
  AlphaBeta() = default;
  AlphaBeta(double alpha, double beta) : alpha_s(alpha), beta_s_per_byte(beta) {}

  double alpha_s = 0;           // latency of one message on a host-to-host path
  double beta_s_per_byte = 0;   // inverse bandwidth of the bottleneck link
  /// The intra-node link class on a platform of multi-GPU nodes (sim/ sets it from the
  /// hierarchical topology's node links); unset elsewhere, where intra() is the global pair.
  std::optional<LinkClass> local;
  [[nodiscard]] LinkClass intra() const { return local.value_or(LinkClass{alpha_s, beta_s_per_byte}); }
  /// Every latency (global and intra-node) times `latency_factor`, every bandwidth times
  /// `bandwidth_factor` (betas divided by it): a network model's factors; (1, inf) keeps
  /// only the latencies, (0, 1) only the transfer terms.
  [[nodiscard]] AlphaBeta scaled(double latency_factor, double bandwidth_factor) const {
    AlphaBeta out(alpha_s * latency_factor, beta_s_per_byte / bandwidth_factor);
    if (local) out.local = LinkClass{local->alpha_s * latency_factor, local->beta_s_per_byte / bandwidth_factor};
    out.software = software;
    out.part = part;
    return out;
  }

  /// The library's software costs (models/software_cost.hpp); null: ideal (alpha-beta exactly).
  std::shared_ptr<const SoftwareCost> software;
  /// Which part of a step's cost step_s() returns: all of it, only its latency terms (overheads,
  /// latency, handshake), or only its transfer term -- so the closed forms split into a latency
  /// and a transfer part with software costs too (scenario/analytic_network.cpp).
  enum class Part { ALL, LATENCY, TRANSFER };
  Part part = Part::ALL;
  [[nodiscard]] AlphaBeta only(Part p) const {
    AlphaBeta out = *this;
    out.part = p;
    return out;
  }

  /// The time of one algorithm step whose messages carry `bytes` each, `concurrent` of them sharing
  /// one NIC direction, on the global links: alpha + concurrent x bytes x beta for ideal software.
  /// Every closed form is a sum of such steps.
  [[nodiscard]] double step_s(double bytes, double concurrent = 1) const {
    return step_on(alpha_s, beta_s_per_byte, bytes, concurrent);
  }
  /// The same on the intra-node links (intra()).
  [[nodiscard]] double local_step_s(double bytes, double concurrent = 1) const {
    const LinkClass l = intra();
    return step_on(l.alpha_s, l.beta_s_per_byte, bytes, concurrent);
  }

 private:
  [[nodiscard]] double step_on(double alpha, double beta, double bytes, double concurrent) const;
};

class NetworkCost;  // models/network_cost.hpp

struct CollectiveGroup {
  CollectiveGroup() = default;
  CollectiveGroup(int workers_, int servers_ = 0,
                  std::shared_ptr<const std::vector<std::vector<int>>> neighbours_ = nullptr)
      : workers(workers_), servers(servers_), neighbours(std::move(neighbours_)) {}

  int workers = 1;
  int servers = 0;  // parameter servers available (PS algorithms need >= 1)
  /// Physical neighbourhood of the worker ranks (a direct link, or one switch
  /// between them), for topology-aware algorithms (multitree). Null: every rank
  /// is every rank's neighbour, as on the reference star.
  std::shared_ptr<const std::vector<std::vector<int>>> neighbours;
  /// Workers per node on a platform of multi-GPU nodes (ranks jG .. jG+G-1 share node j);
  /// 0 when the platform has no such nodes. hierarchical reads its G from here.
  int ranks_per_node = 0;
  /// Contention-aware cost of a schedule on this group's platform (models/network_cost.hpp),
  /// for meta-algorithms such as "auto". Null: the reference star, where the closed forms are exact.
  std::shared_ptr<const NetworkCost> network_cost;
  [[nodiscard]] int size() const { return workers + servers; }
};

/// What a meta-algorithm ("auto") runs for one call, and why.
struct CollectiveChoice {
  std::string algorithm;    // the algorithm that runs
  double estimated_s = 0;   // the cost it won with (contention estimate or closed form)
  std::string basis;        // "contention estimate", "closed form", or the closed form with the reason
};

class Collective {
 public:
  virtual ~Collective() = default;
  /// "allreduce", "allgather", "reduce_scatter", "broadcast".
  [[nodiscard]] virtual std::string operation() const = 0;
  /// True if this algorithm needs parameter servers (group.servers >= 1).
  [[nodiscard]] virtual bool uses_servers() const { return false; }
  /// The closed form for `bytes` per worker on the reference platform.
  [[nodiscard]] virtual double analytic_time_s(const CollectiveGroup& group, double bytes,
                                               const AlphaBeta& ab) const = 0;
  /// Every step of rank `rank` (stepwise granularity).
  [[nodiscard]] virtual std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                            double bytes) const = 0;
  /// rank_schedule() one step at a time, the same steps in the same order. By default the
  /// schedule is built first; algorithms with many steps per rank generate them instead.
  [[nodiscard]] virtual std::unique_ptr<StepSource> rank_steps(int rank, const CollectiveGroup& group,
                                                               double bytes) const {
    return std::make_unique<ScheduleSource>(rank_schedule(rank, group, bytes));
  }
  /// Pipelined granularity: consecutive steps with the same (kind, peer) pattern
  /// merged into one step carrying their bytes and latency_steps. Algorithms may
  /// override this with a direct O(1)-per-phase construction.
  [[nodiscard]] virtual std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                          double bytes) const;
};

/// A meta-collective ("auto" and its kin, models/collectives/auto.cpp, models/gathered_auto.cpp;
/// models/dependent_rounds.hpp around one): a Collective that picks, per call, the algorithm that
/// runs, by the group's NetworkCost when it has one, else by the closed forms. Plain algorithms are
/// not selectors; ask through the free functions below, which answer for both.
class CollectiveSelector {
 public:
  virtual ~CollectiveSelector() = default;
  /// The algorithm that runs for this call (its rank_schedule() has no network to pick with).
  [[nodiscard]] virtual const Collective& resolve(const CollectiveGroup& group, double bytes,
                                                  const AlphaBeta& ab) const = 0;
  /// The name of that algorithm; empty when the selector runs itself.
  [[nodiscard]] virtual std::string resolved_name(const CollectiveGroup& group, double bytes,
                                                  const AlphaBeta& ab) const = 0;
  /// The pick with its cost and the basis of the choice; nullopt when the selector runs itself.
  [[nodiscard]] virtual std::optional<CollectiveChoice> choice(const CollectiveGroup& group, double bytes,
                                                               const AlphaBeta& ab) const = 0;
};

/// The algorithm that runs when `collective` is called: itself, or a selector's pick.
const Collective& resolve(const Collective& collective, const CollectiveGroup& group, double bytes,
                          const AlphaBeta& ab);
/// The name of a selector's pick; empty for a plain algorithm.
std::string resolved_name(const Collective& collective, const CollectiveGroup& group, double bytes,
                          const AlphaBeta& ab);
/// A selector's pick with its cost and basis; nullopt for a plain algorithm.
std::optional<CollectiveChoice> choice(const Collective& collective, const CollectiveGroup& group, double bytes,
                                       const AlphaBeta& ab);

/// Merges consecutive steps with identical (kind, peer) op lists (the default rank_phases).
std::vector<RankStep> merge_steps(std::vector<RankStep> steps);

using CollectiveRegistry = Registry<Collective>;

}  // namespace ddlsim::models
