// ddlsim: the "what-if" comparison of collective algorithms (`ddlsim collectives`).
//
// For one (N, M, alpha, beta, topology) point, every registered algorithm's
// closed form and, at flow fidelity, its simulated time: all algorithms run
// one after another in a single SimGrid engine, separated by barriers of every
// rank, so each is timed alone on an otherwise idle network.
#pragma once

#include "models/collective.hpp"
#include "scenario/scenario.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct CompareWork;

struct CompareRequest {
  int workers = 8;
  /// Parameter servers for the PS algorithms (ps). They are attached only when a
  /// PS algorithm is compared, each by its own link to the node worker 0 hangs
  /// off (platforms::attach_servers), so the workers' topology stays as asked.
  /// 0: PS algorithms are reported as not applicable when every algorithm is
  /// compared, and refused when named in `algorithms`.
  int servers = 0;
  double server_bandwidth_Bps = 0;  // each server's link; 0: link.bandwidth_Bps
  double bytes = 1 << 20;
  platforms::LinkSpec link{25e9 / 8, 1e-6};
  std::string topology = "star";
  json topology_params = json::object();
  std::optional<platforms::Routing> routing;  // unset: platforms::default_routing(topology)
  std::uint64_t seed = 1;                     // ECMP's flow hash
  bool simulate = true;  // false: closed forms only (analytic fidelity)
  NetworkSpec network;   // model (and calibration factors) and granularity for the simulation
  /// Flow fidelity: lockstep schedules whose transfers never share a link are replayed without
  /// SimGrid's actors (engine/stepwise_replay.hpp; the same times); false: always SimGrid (--solver).
  bool replay = true;
  /// Untimed runs of each algorithm before the timed one (--warmup; packet fidelity: the pairs' TCP
  /// connections open and their windows grown, as in a measurement's warm-up rounds).
  int warmup_rounds = 0;
  std::vector<std::string> algorithms;  // empty: every registered algorithm
  json params = json::object();         // algorithm name -> its params object (--params)
  /// Called once the topology, the group and the closed forms are made, before anything is
  /// simulated: the work estimate (app/compare_estimate.hpp) may refuse by throwing.
  std::function<void(const CompareWork&)> before_run;
};

struct CompareRow {
  std::string algorithm;
  std::string operation;
  std::string resolved;      // for "auto": the algorithm it picked
  double analytic_s = 0;
  double simulated_s = -1;   // < 0 when not simulated
  double algbw_GBps = 0;     // M / t, t simulated when available
  double busbw_GBps = 0;     // algbw * bus factor (nccl-tests)
  bool fastest = false;      // fastest of its operation (see compare_collectives)
  std::int64_t flows = 0;    // messages simulated (0 at analytic fidelity)
  bool replayed = false;     // simulated by the replay, no link shared (engine/stepwise_replay.hpp)
  bool uses_servers = false; // a PS algorithm
  bool applicable = true;    // false: not run (e.g. ps without servers); `note` says why
  std::string note;
};

/// What the work estimate of a comparison reads: every row (rows not run have applicable false),
/// the algorithm and the (alpha, beta) each runs with, the topology (servers attached when a PS
/// algorithm runs) and the group of ranks.
struct CompareWork {
  const CompareRequest& request;
  const platforms::Topology& topology;
  const models::CollectiveGroup& group;
  const std::vector<std::shared_ptr<const models::Collective>>& algorithms;
  const std::vector<models::AlphaBeta>& ab;
  const std::vector<CompareRow>& rows;
  /// An algorithm's params as given in --params (an empty object when none).
  std::function<json(const std::string&)> params_of;
};

/// The nccl-tests bus-bandwidth factor: 2(N-1)/N for all-reduce, (N-1)/N for
/// all-gather and reduce-scatter, 1 for broadcast.
double bus_factor(const std::string& operation, int n);

/// Every algorithm's row. `fastest` marks, per operation, the real algorithm(s)
/// with the smallest time (simulated when available), ties within 1e-9
/// relative; a meta-algorithm ("auto") is never marked when the algorithm it
/// resolves to is compared too (it runs that algorithm: they tie, and that
/// algorithm is marked), only when it stands for one that is not.
std::vector<CompareRow> compare_collectives(const CompareRequest& request, const std::vector<std::string>& engine_args);

/// Text table (or CSV) of the rows. The table lists rows that did not run with
/// their note; the CSV leaves them out (see CompareRow::note).
std::string format_compare(const CompareRequest& request, const std::vector<CompareRow>& rows, bool csv);

}  // namespace ddlsim::sim
