// Test helper: the oracle of the collective tests, independent of the algorithms.
//
// A small flow-level simulator of the reference platform: a star of hosts, each with an uplink and
// a downlink of capacity 1/beta; a transfer starts when both its SEND and its RECV are posted
// (rendezvous), spends alpha in its latency phase (using no bandwidth), then moves its bytes at
// the max-min fair rate of the transfers in their bandwidth phase (progressive filling,
// recomputed at every event). A rank posts a step's ops at once, waits for all of them, then --
// for a pipelined entry with latency_steps = k > 1 -- waits (k-1) alpha more (as sim/'s executor
// does), then posts its next step. check_collective() checks (a) SENDs match RECVs, (b) the
// stepwise schedule's makespan equals the closed form, (c) the pipelined one moves the same bytes
// in the same time. Used by tests/models/collective_test.cpp and tests/models/collectives/.
#pragma once

#include "models/collective.hpp"
#include "models/error.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddlsim::test {

using models::AlphaBeta;
using models::Collective;
using models::CollectiveGroup;
using models::RankOp;
using models::RankStep;
using Schedules = std::vector<std::vector<RankStep>>;

// ---------------------------------------------------------------- evaluator

/// Max-min fair rates (progressive filling) of flows src[i] -> dst[i] on n hosts.
inline std::vector<double> max_min_rates(const std::vector<int>& src, const std::vector<int>& dst, int n, double capacity) {
  const std::size_t flows = src.size();
  std::vector<double> rate(flows, -1.0);
  std::vector<double> residual(static_cast<std::size_t>(2 * n), capacity);  // [0, n): uplinks, [n, 2n): downlinks
  std::vector<int> count(static_cast<std::size_t>(2 * n), 0);
  auto up = [&](std::size_t f) { return static_cast<std::size_t>(src[f]); };
  auto down = [&](std::size_t f) { return static_cast<std::size_t>(n + dst[f]); };
  for (std::size_t f = 0; f < flows; ++f) {
    ++count[up(f)];
    ++count[down(f)];
  }
  std::size_t left = flows;
  std::vector<char> saturated(residual.size());
  while (left > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < residual.size(); ++l)
      if (count[l] > 0) level = std::min(level, residual[l] / count[l]);
    for (std::size_t l = 0; l < residual.size(); ++l)
      saturated[l] = count[l] > 0 && residual[l] / count[l] <= level * (1 + 1e-12);
    for (std::size_t f = 0; f < flows; ++f) {
      if (rate[f] >= 0 || !(saturated[up(f)] || saturated[down(f)])) continue;
      rate[f] = level;
      residual[up(f)] -= level;
      residual[down(f)] -= level;
      --count[up(f)];
      --count[down(f)];
      --left;
    }
  }
  return rate;
}

/// Makespan of `schedules` (one per rank) on the reference platform.
inline double evaluate(const Schedules& schedules, double alpha, double beta) {
  const int n = static_cast<int>(schedules.size());
  const double capacity = 1.0 / beta;
  struct Transfer {
    int src, dst;
    double remaining;
    double bandwidth_from;  // end of the latency phase
    bool done;
  };
  std::vector<Transfer> transfers;
  std::vector<std::size_t> step(static_cast<std::size_t>(n), 0);
  std::vector<int> outstanding(static_cast<std::size_t>(n), 0);
  std::vector<double> wake(static_cast<std::size_t>(n), -1.0);
  std::vector<std::deque<double>> sends(static_cast<std::size_t>(n * n)), recvs(static_cast<std::size_t>(n * n));
  double now = 0.0;

  auto pair = [n](int s, int d) { return static_cast<std::size_t>(s * n + d); };
  auto post = [&](int r) {
    const auto& steps = schedules[static_cast<std::size_t>(r)];
    while (step[static_cast<std::size_t>(r)] < steps.size() && steps[step[static_cast<std::size_t>(r)]].ops.empty())
      ++step[static_cast<std::size_t>(r)];
    if (step[static_cast<std::size_t>(r)] >= steps.size()) return;
    const auto& ops = steps[step[static_cast<std::size_t>(r)]].ops;
    outstanding[static_cast<std::size_t>(r)] = static_cast<int>(ops.size());
    for (const auto& op : ops) {
      const bool is_send = op.kind == RankOp::Kind::SEND;
      const int s = is_send ? r : op.peer, d = is_send ? op.peer : r;
      auto& mine = is_send ? sends[pair(s, d)] : recvs[pair(s, d)];
      auto& theirs = is_send ? recvs[pair(s, d)] : sends[pair(s, d)];
      if (theirs.empty()) {
        mine.push_back(op.bytes);
      } else {
        const double bytes = is_send ? op.bytes : theirs.front();
        theirs.pop_front();
        transfers.push_back(Transfer{s, d, bytes, now + alpha, false});
      }
    }
  };
  auto advance = [&](int r) {
    ++step[static_cast<std::size_t>(r)];
    post(r);
  };
  for (int r = 0; r < n; ++r) post(r);

  std::vector<std::size_t> active;
  std::vector<int> src, dst;
  while (true) {
    active.clear();
    src.clear();
    dst.clear();
    double next = std::numeric_limits<double>::infinity();
    bool pending = false;
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      auto& t = transfers[i];
      if (t.done) continue;
      pending = true;
      if (t.bandwidth_from > now) {
        next = std::min(next, t.bandwidth_from);
      } else {
        active.push_back(i);
        src.push_back(t.src);
        dst.push_back(t.dst);
      }
    }
    for (int r = 0; r < n; ++r)
      if (wake[static_cast<std::size_t>(r)] >= 0) {
        next = std::min(next, wake[static_cast<std::size_t>(r)]);
        pending = true;
      }
    if (!pending) break;
    const auto rates = max_min_rates(src, dst, n, capacity);
    std::vector<double> finish(active.size());
    for (std::size_t k = 0; k < active.size(); ++k) {
      finish[k] = now + transfers[active[k]].remaining / rates[k];
      next = std::min(next, finish[k]);
    }
    const double horizon = next * (1 + 1e-12) + 1e-300;
    std::vector<int> completed_ranks;
    for (std::size_t k = 0; k < active.size(); ++k) {
      auto& t = transfers[active[k]];
      if (finish[k] <= horizon) {
        t.done = true;
        for (int r : {t.src, t.dst})
          if (--outstanding[static_cast<std::size_t>(r)] == 0) completed_ranks.push_back(r);
      } else {
        t.remaining -= rates[k] * (next - now);
      }
    }
    now = next;
    for (auto& t : transfers)
      if (!t.done && t.bandwidth_from > now && t.bandwidth_from <= horizon) t.bandwidth_from = now;
    for (int r : completed_ranks) {
      const auto& s = schedules[static_cast<std::size_t>(r)][step[static_cast<std::size_t>(r)]];
      if (s.latency_steps > 1) wake[static_cast<std::size_t>(r)] = now + (s.latency_steps - 1) * alpha;
      else advance(r);
    }
    for (int r = 0; r < n; ++r)
      if (wake[static_cast<std::size_t>(r)] >= 0 && wake[static_cast<std::size_t>(r)] <= horizon &&
          std::find(completed_ranks.begin(), completed_ranks.end(), r) == completed_ranks.end()) {
        wake[static_cast<std::size_t>(r)] = -1.0;
        advance(r);
      }
    // Drop finished transfers now and then to keep the scan short.
    if (transfers.size() > 4096) {
      std::vector<Transfer> live;
      for (const auto& t : transfers)
        if (!t.done) live.push_back(t);
      transfers = std::move(live);
    }
  }
  for (int r = 0; r < n; ++r) {
    REQUIRE_MESSAGE(step[static_cast<std::size_t>(r)] == schedules[static_cast<std::size_t>(r)].size(),
                    fmt::format("rank {} stuck at step {} (deadlock)", r, step[static_cast<std::size_t>(r)]));
  }
  return now;
}

// ---------------------------------------------------------------- helpers

inline const std::vector<int> SIZES{1, 2, 3, 4, 7, 8, 16, 64};
inline const std::vector<double> BYTES{1024.0, 1048576.0, 104857600.0};
inline const std::vector<AlphaBeta> NETWORKS{AlphaBeta{2e-6, 1 / 3.125e9}, AlphaBeta{1e-3, 1e-9}};

inline std::unique_ptr<Collective> make(const std::string& name, const json& params = json::object()) {
  return models::CollectiveRegistry::instance().create(name, params, "/training/collective/name", "/training/collective/params",
                                               "collective");
}

inline Schedules stepwise(const Collective& c, const CollectiveGroup& g, double bytes) {
  Schedules s;
  for (int r = 0; r < g.size(); ++r) s.push_back(c.rank_schedule(r, g, bytes));
  return s;
}

inline Schedules pipelined(const Collective& c, const CollectiveGroup& g, double bytes) {
  Schedules s;
  for (int r = 0; r < g.size(); ++r) s.push_back(c.rank_phases(r, g, bytes));
  return s;
}

/// (a) For every ordered pair, the SEND bytes a -> b in a's schedule equal the RECV bytes
/// from a in b's schedule, in order. Returns the per-pair byte totals.
inline std::map<std::pair<int, int>, double> check_matching(const Schedules& s) {
  const int n = static_cast<int>(s.size());
  std::map<std::pair<int, int>, std::vector<double>> sent, received;
  for (int r = 0; r < n; ++r)
    for (const auto& step : s[static_cast<std::size_t>(r)])
      for (const auto& op : step.ops) {
        REQUIRE(op.peer >= 0);
        REQUIRE(op.peer < n);
        REQUIRE(op.peer != r);
        REQUIRE(op.bytes >= 0);
        if (op.kind == RankOp::Kind::SEND) sent[{r, op.peer}].push_back(op.bytes);
        else received[{op.peer, r}].push_back(op.bytes);
      }
  std::map<std::pair<int, int>, double> totals;
  for (const auto& [key, list] : sent) {
    CAPTURE(key.first);
    CAPTURE(key.second);
    const auto it = received.find(key);
    REQUIRE(it != received.end());
    REQUIRE(it->second.size() == list.size());
    double total = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      CHECK(it->second[i] == doctest::Approx(list[i]).epsilon(1e-12));
      total += list[i];
    }
    totals[key] = total;
  }
  for (const auto& [key, list] : received) CHECK(sent.count(key) == 1);
  return totals;
}

/// (a), (b), (c) for one collective on one group.
inline void check_collective(const std::string& label, const Collective& coll, const CollectiveGroup& g) {
  CAPTURE(label);
  CAPTURE(g.workers);
  CAPTURE(g.servers);
  for (double bytes : BYTES) {
    CAPTURE(bytes);
    for (const auto& ab : NETWORKS) {
      CAPTURE(ab.alpha_s);
      const Collective& algo = models::resolve(coll, g, bytes, ab);
      const double analytic = coll.analytic_time_s(g, bytes, ab);
      CHECK(algo.analytic_time_s(g, bytes, ab) == doctest::Approx(analytic).epsilon(1e-12));
      const Schedules steps = stepwise(algo, g, bytes);
      const Schedules phases = pipelined(algo, g, bytes);
      if (g.workers <= 1 && !algo.uses_servers()) {  // a lone worker with a server still pushes and pulls
        CHECK(analytic == 0.0);
        for (const auto& s : steps) CHECK(s.empty());
        for (const auto& s : phases) CHECK(s.empty());
        continue;
      }
      const auto totals = check_matching(steps);                     // (a)
      CHECK(evaluate(steps, ab.alpha_s, ab.beta_s_per_byte) == doctest::Approx(analytic).epsilon(1e-6));  // (b)
      const auto phase_totals = check_matching(phases);              // (c)
      REQUIRE(phase_totals.size() == totals.size());
      for (const auto& [key, total] : totals) CHECK(phase_totals.at(key) == doctest::Approx(total).epsilon(1e-12));
      CHECK(evaluate(phases, ab.alpha_s, ab.beta_s_per_byte) == doctest::Approx(analytic).epsilon(1e-6));
    }
  }
}

inline void check_all_sizes(const std::string& label, const json& params, const std::vector<int>& sizes = SIZES) {
  auto coll = make(label, params);
  for (int n : sizes) {
    if (coll->uses_servers()) {
      for (int servers : {1, 4}) check_collective(label + " " + params.dump(), *coll, CollectiveGroup{n, servers});
    } else {
      check_collective(label + " " + params.dump(), *coll, CollectiveGroup{n, 0});
    }
  }
}

/// The closed form of `name` for 1 MiB at alpha = 1 us, beta = 1 ns/byte (1 GB/s): the
/// reference of the hand-computed values; HAND_MB = M beta.
inline const AlphaBeta HAND_AB{1e-6, 1e-9};
inline constexpr double HAND_M = 1048576.0;
inline constexpr double HAND_MB = HAND_M * 1e-9;
inline double hand_time(const std::string& name, int n, const json& params = json::object(), int servers = 0) {
  return make(name, params)->analytic_time_s(CollectiveGroup{n, servers}, HAND_M, HAND_AB);
}

}  // namespace ddlsim::test
