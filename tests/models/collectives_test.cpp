// Collective algorithms: schedules match, and the closed forms are exact.
//
// The oracle is a small flow-level simulator of the reference platform written
// here, independent of the algorithms: a star of hosts, each with an uplink and
// a downlink of capacity 1/beta; a transfer starts when both its SEND and its
// RECV are posted (rendezvous), spends alpha in its latency phase (using no
// bandwidth), then moves its bytes at the max-min fair rate of the transfers in
// their bandwidth phase (progressive filling, recomputed at every event). A
// rank posts a step's ops at once, waits for all of them, then -- for a
// pipelined entry with latency_steps = k > 1 -- waits (k-1) alpha more (as
// sim/'s executor does), then posts its next step.
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

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

using Schedules = std::vector<std::vector<RankStep>>;

// ---------------------------------------------------------------- evaluator

/// Max-min fair rates (progressive filling) of flows src[i] -> dst[i] on n hosts.
std::vector<double> max_min_rates(const std::vector<int>& src, const std::vector<int>& dst, int n, double capacity) {
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
double evaluate(const Schedules& schedules, double alpha, double beta) {
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

TEST_CASE("evaluator: hand-checked cases") {
  const double a = 1e-3, b = 1e-6;  // 1 ms latency, 1 MB/s
  // One transfer: alpha + bytes beta.
  Schedules one{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}}, 1}}, {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}}};
  CHECK(evaluate(one, a, b) == doctest::Approx(a + 1000 * b).epsilon(1e-12));
  // Two senders into one downlink, the second starting later: rank 2 first sends 500 B to
  // rank 3 (done at a + 500 b), then 1000 B to rank 0. Rank 1's 3000 B to rank 0 has the
  // downlink alone from a until 2a + 500 b, then shares it; the downlink never idles from a
  // on, so the last byte arrives at a + 4000 b.
  Schedules late{{RankStep{{RankOp{RankOp::Kind::RECV, 1, 3000}, RankOp{RankOp::Kind::RECV, 2, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::SEND, 0, 3000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::SEND, 3, 500}}, 1}, RankStep{{RankOp{RankOp::Kind::SEND, 0, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::RECV, 2, 500}}, 1}}};
  CHECK(evaluate(late, a, b) == doctest::Approx(a + 4000 * b).epsilon(1e-12));
  // Rendezvous: a receive posted late holds the transfer back.
  Schedules held{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}}, 1}, RankStep{{RankOp{RankOp::Kind::SEND, 2, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}}};
  CHECK(evaluate(held, a, b) == doctest::Approx(2 * (a + 1000 * b)).epsilon(1e-12));
  // Max-min with unequal loads: 0 -> 1, 0 -> 2, 3 -> 2 all at once: uplink 0 and downlink 2 each
  // carry two flows: every flow gets 1/2; all end at a + 2000 b.
  Schedules mm{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}, RankOp{RankOp::Kind::SEND, 2, 1000}}, 1}},
               {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}},
               {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}, RankOp{RankOp::Kind::RECV, 3, 1000}}, 1}},
               {RankStep{{RankOp{RankOp::Kind::SEND, 2, 1000}}, 1}}};
  CHECK(evaluate(mm, a, b) == doctest::Approx(a + 2000 * b).epsilon(1e-12));
  // Progressive filling: flows 0->1 (alone on both links) and 0->2, 3->2, 4->2 (downlink 2 shared by 3).
  // 0->2 gets 1/3, so 0->1 gets 2/3 of uplink 0.
  const auto r = max_min_rates({0, 0, 3, 4}, {1, 2, 2, 2}, 5, 1.0);
  CHECK(r[0] == doctest::Approx(2.0 / 3));
  CHECK(r[1] == doctest::Approx(1.0 / 3));
  CHECK(r[2] == doctest::Approx(1.0 / 3));
  // A pipelined entry pays (k-1) extra latencies after its flow.
  Schedules piped{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}}, 3}},
                  {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 3}}};
  CHECK(evaluate(piped, a, b) == doctest::Approx(3 * a + 1000 * b).epsilon(1e-12));
}

// ---------------------------------------------------------------- helpers

const std::vector<int> SIZES{1, 2, 3, 4, 7, 8, 16, 64};
const std::vector<double> BYTES{1024.0, 1048576.0, 104857600.0};
const std::vector<AlphaBeta> NETWORKS{AlphaBeta{2e-6, 1 / 3.125e9}, AlphaBeta{1e-3, 1e-9}};

std::unique_ptr<Collective> make(const std::string& name, const json& params = json::object()) {
  return CollectiveRegistry::instance().create(name, params, "/training/collective/name", "/training/collective/params",
                                               "collective");
}

Schedules stepwise(const Collective& c, const CollectiveGroup& g, double bytes) {
  Schedules s;
  for (int r = 0; r < g.size(); ++r) s.push_back(c.rank_schedule(r, g, bytes));
  return s;
}

Schedules pipelined(const Collective& c, const CollectiveGroup& g, double bytes) {
  Schedules s;
  for (int r = 0; r < g.size(); ++r) s.push_back(c.rank_phases(r, g, bytes));
  return s;
}

/// (a) For every ordered pair, the SEND bytes a -> b in a's schedule equal the RECV bytes
/// from a in b's schedule, in order. Returns the per-pair byte totals.
std::map<std::pair<int, int>, double> check_matching(const Schedules& s) {
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
void check_collective(const std::string& label, const Collective& coll, const CollectiveGroup& g) {
  CAPTURE(label);
  CAPTURE(g.workers);
  CAPTURE(g.servers);
  for (double bytes : BYTES) {
    CAPTURE(bytes);
    for (const auto& ab : NETWORKS) {
      CAPTURE(ab.alpha_s);
      const Collective& algo = coll.resolve(g, bytes, ab);
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

void check_all_sizes(const std::string& label, const json& params, const std::vector<int>& sizes = SIZES) {
  auto coll = make(label, params);
  for (int n : sizes) {
    if (coll->uses_servers()) {
      for (int servers : {1, 4}) check_collective(label + " " + params.dump(), *coll, CollectiveGroup{n, servers});
    } else {
      check_collective(label + " " + params.dump(), *coll, CollectiveGroup{n, 0});
    }
  }
}

const std::vector<std::string> EXPECTED{"artopk_ring",   "artopk_tree",        "bruck_allgather",
                                        "auto",          "binomial_broadcast", "direct",         "double_binary_tree",
                                        "halving_doubling", "hierarchical",    "master_worker",  "multitree",
                                        "ps",            "recursive_doubling", "ring",           "ring_allgather",
                                        "ring_reduce_scatter", "torus2d",      "tree"};

}  // namespace

// ---------------------------------------------------------------- (d) registry and parameters

TEST_CASE("collectives: every algorithm is registered with a description") {
  const auto& registry = CollectiveRegistry::instance();
  for (const auto& name : EXPECTED) {
    CAPTURE(name);
    CHECK(registry.contains(name));
  }
  for (const auto* entry : registry.entries()) CHECK(!entry->description.empty());
  CHECK(make("ring_allgather")->operation() == "allgather");
  CHECK(make("ring_reduce_scatter")->operation() == "reduce_scatter");
  CHECK(make("binomial_broadcast")->operation() == "broadcast");
  CHECK(make("bruck_allgather")->operation() == "allgather");
  CHECK(make("artopk_ring")->operation() == "artopk");  // never a dense gradient's all-reduce
  CHECK(make("artopk_tree")->operation() == "artopk");
  CHECK(make("ps")->uses_servers());
  for (const char* name : {"auto", "direct", "double_binary_tree", "halving_doubling", "hierarchical", "master_worker",
                           "multitree", "recursive_doubling", "ring", "torus2d", "tree"}) {
    CAPTURE(name);
    CHECK(make(name)->operation() == "allreduce");
    CHECK_FALSE(make(name)->uses_servers());
  }
}

TEST_CASE("collectives: parameter errors name the JSON path") {
  auto& registry = CollectiveRegistry::instance();
  CHECK_THROWS_WITH_AS(registry.create("tree", json{{"segmets", 2}}, "/training/collective/name",
                                       "/training/collective/params", "collective"),
                       "/training/collective/params/segmets: unknown key \"segmets\"; valid keys are: segments",
                       ddlsim::ConfigError);
  CHECK_THROWS_WITH_AS(make("tree", json{{"segments", 0}}),
                       "/training/collective/params/segments: expected an integer in [1, 1048576], got 0", ConfigError);
  CHECK_THROWS_WITH_AS(make("hierarchical", json{{"gpus_per_node", "8"}}),
                       "/training/collective/params/gpus_per_node: expected an integer, got the string \"8\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("torus2d", json{{"row", 2}}),
                       "/training/collective/params/row: unknown key \"row\"; valid keys are: rows", ConfigError);
  CHECK_THROWS_WITH_AS(make("multitree", json{{"trees", 0}}),
                       "/training/collective/params/trees: expected an integer in [1, 65536], got 0", ConfigError);
  CHECK_THROWS_WITH_AS(make("double_binary_tree", json{{"segment", 2}}),
                       "/training/collective/params/segment: unknown key \"segment\"; valid keys are: segments",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("ring", json{{"segment", 2}}),
                       "/training/collective/params/segment: unknown key \"segment\"; valid keys are: segments",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("auto", json{{"candidates", json::array({"ring", "ps"})}}),
                       "/training/collective/params/candidates/1: unknown all-reduce algorithm \"ps\"; valid names are: "
                       "direct, double_binary_tree, halving_doubling, hierarchical, master_worker, multitree, "
                       "recursive_doubling, ring, torus2d, tree",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("auto", json{{"candidates", json::array()}}),
                       "/training/collective/params/candidates: expected a non-empty array of algorithm names, got an "
                       "array",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("auto", json{{"latency", "2 parsecs"}}),
                       "/training/collective/params/latency: unknown time unit \"parsecs\" in \"2 parsecs\"; expected "
                       "one of ns, us, ms, s",
                       ConfigError);
  CHECK_THROWS_WITH_AS(registry.create("treee", json::object(), "/training/collective/name",
                                       "/training/collective/params", "collective"),
                       "/training/collective/name: unknown collective \"treee\"; valid names are: artopk_ring, "
                       "artopk_tree, auto, binomial_broadcast, bruck_allgather, direct, double_binary_tree, halving_doubling, "
                       "hierarchical, master_worker, multitree, ps, recursive_doubling, ring, ring_allgather, ring_reduce_scatter, torus2d, tree",
                       ConfigError);
  // Group-dependent problems surface when the collective is used.
  CHECK_THROWS_WITH_AS((void)make("torus2d", json{{"rows", 3}})->analytic_time_s(CollectiveGroup{8, 0}, 1, AlphaBeta{1, 1}),
                       "torus2d: rows = 3 does not divide the group size 8", std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)make("ps")->rank_schedule(0, CollectiveGroup{4, 0}, 1),
                       "ps: the group has no parameter server (servers must be >= 1)", std::invalid_argument);
}

// ---------------------------------------------------------------- (a)-(c) every algorithm, default parameters

TEST_CASE("collectives: every registered algorithm matches and equals its closed form") {
  for (const auto& name : CollectiveRegistry::instance().names()) check_all_sizes(name, json::object());
}

TEST_CASE("collectives: parameter variants match and equal their closed forms") {
  const std::vector<int> irregular{2, 3, 5, 6, 7, 12, 19, 27, 33};
  for (int s : {2, 3, 5}) {
    check_all_sizes("tree", json{{"segments", s}});
    check_all_sizes("tree", json{{"segments", s}}, irregular);
  }
  for (int s : {2, 4}) check_all_sizes("double_binary_tree", json{{"segments", s}});
  for (int s : {2, 3}) check_all_sizes("ring", json{{"segments", s}});
  check_all_sizes("double_binary_tree", json::object(), irregular);
  for (int g : {1, 2, 3, 4, 16}) check_all_sizes("hierarchical", json{{"gpus_per_node", g}});
  check_all_sizes("hierarchical", json{{"gpus_per_node", 3}}, irregular);
  check_all_sizes("torus2d", json{{"rows", 2}}, {2, 4, 8, 16, 64});
  check_all_sizes("torus2d", json{{"rows", 8}}, {8, 16, 64});
  check_all_sizes("torus2d", json::object(), {6, 12, 27});
  for (int k : {1, 2, 3, 8}) check_all_sizes("multitree", json{{"trees", k}});
  check_all_sizes("multitree", json::object(), irregular);
  check_all_sizes("recursive_doubling", json::object(), irregular);
  check_all_sizes("halving_doubling", json::object(), irregular);
  check_all_sizes("binomial_broadcast", json::object(), irregular);
  check_all_sizes("bruck_allgather", json::object(), irregular);
  for (const char* name : {"artopk_ring", "artopk_tree"}) {
    check_all_sizes(name, json::object(), irregular);
    check_all_sizes(name, json{{"root", 1}}, {2, 3, 5, 6, 7, 12});
  }
  check_all_sizes("ps", json::object(), {5, 6, 12});
  check_all_sizes("auto", json{{"candidates", json::array({"ring", "tree", "recursive_doubling", "halving_doubling"})}});
}

// ---------------------------------------------------------------- (e) hand-computed values

TEST_CASE("collectives: hand-computed closed forms") {
  const AlphaBeta ab{1e-6, 1e-9};  // 1 us, 1 GB/s
  const double m = 1048576.0;      // 1 MiB
  const double mb = m * 1e-9;
  auto t = [&](const std::string& name, int n, const json& params = json::object(), int servers = 0) {
    return make(name, params)->analytic_time_s(CollectiveGroup{n, servers}, m, ab);
  };
  CHECK(t("ring", 4) == doctest::Approx(6e-6 + 1.5 * mb).epsilon(1e-12));  // 2(N-1) a + 2(N-1)/N M b
  CHECK(t("ring", 4) == doctest::Approx(1.578864e-3).epsilon(1e-12));
  CHECK(t("ring_allgather", 4) == doctest::Approx(3e-6 + 0.75 * mb).epsilon(1e-12));
  CHECK(t("ring_reduce_scatter", 8) == doctest::Approx(7e-6 + 0.875 * mb).epsilon(1e-12));
  CHECK(t("ps", 8, json::object(), 1) == doctest::Approx(2e-6 + 16 * mb).epsilon(1e-12));
  CHECK(t("ps", 8, json::object(), 2) == doctest::Approx(2e-6 + 8 * mb).epsilon(1e-12));
  CHECK(t("ps", 2, json::object(), 4) == doctest::Approx(2e-6 + 2 * mb).epsilon(1e-12));  // servers outnumber workers
  CHECK(t("ps", 1, json::object(), 1) == doctest::Approx(2e-6 + 2 * mb).epsilon(1e-12));  // push M, pull M back
  CHECK(t("direct", 4) == doctest::Approx(2e-6 + 1.5 * mb).epsilon(1e-12));
  CHECK(t("master_worker", 4) == doctest::Approx(2e-6 + 6 * mb).epsilon(1e-12));
  CHECK(t("binomial_broadcast", 7) == doctest::Approx(3 * (1e-6 + mb)).epsilon(1e-12));
  CHECK(t("binomial_broadcast", 8) == doctest::Approx(3 * (1e-6 + mb)).epsilon(1e-12));
  CHECK(t("recursive_doubling", 8) == doctest::Approx(3 * (1e-6 + mb)).epsilon(1e-12));
  CHECK(t("recursive_doubling", 7) == doctest::Approx(4 * (1e-6 + mb)).epsilon(1e-12));  // 2 + pre/post
  CHECK(t("halving_doubling", 8) == doctest::Approx(6e-6 + 1.75 * mb).epsilon(1e-12));
  CHECK(t("halving_doubling", 6) == doctest::Approx(4e-6 + 1.5 * mb + 2 * (1e-6 + mb)).epsilon(1e-12));
  // Perfect tree, N = 7: 2 D (a + 2 M b), D = 2; with 4 segments 2 (D + 3)(a + 2 M b / 4).
  CHECK(t("tree", 7) == doctest::Approx(4e-6 + 8 * mb).epsilon(1e-12));
  CHECK(t("tree", 7, json{{"segments", 4}}) == doctest::Approx(10 * (1e-6 + 0.5 * mb)).epsilon(1e-12));
  // N = 4: 0 -> {1, 2}, 1 -> {3}. Reduce: rank 1 done at c, rank 2 (leaf) at 0, root at
  // max(0 + tau, c + c) = 2c; broadcast: tau (root to 1, 2) + c (1 to 3). T = 3c + tau = 4a + 5 M b.
  CHECK(t("tree", 4) == doctest::Approx(4e-6 + 5 * mb).epsilon(1e-12));
  CHECK(t("tree", 2, json{{"segments", 3}}) == doctest::Approx(6e-6 + 2 * mb).epsilon(1e-12));
  CHECK(t("hierarchical", 16) == doctest::Approx(2 * (1e-6 + 7 * mb) + 2 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(t("hierarchical", 20) == doctest::Approx(2 * (1e-6 + 7 * mb) + 4 * (1e-6 + mb / 3)).epsilon(1e-12));
  CHECK(t("hierarchical", 5) == doctest::Approx(2 * (1e-6 + 4 * mb)).epsilon(1e-12));
  CHECK(t("torus2d", 16) == doctest::Approx(6 * (1e-6 + mb / 4) + 6 * (1e-6 + mb / 16)).epsilon(1e-12));
  CHECK(t("torus2d", 7) == doctest::Approx(t("ring", 7)).epsilon(1e-12));
  // Port-scheduled trees: ticks x (a + message b).
  CHECK(t("double_binary_tree", 7) == doctest::Approx(8 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(t("double_binary_tree", 16) == doctest::Approx(12 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(t("double_binary_tree", 64) == doctest::Approx(20 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(t("multitree", 8, json{{"trees", 1}}) == doctest::Approx(6 * (1e-6 + mb)).epsilon(1e-12));
  for (int n : SIZES) CHECK(t("tree", n) >= 0.0);
}

TEST_CASE("collectives: auto picks the smallest closed form") {
  const AlphaBeta ab{2e-6, 1 / 3.125e9};
  auto all = make("auto");
  // On the ideal star direct wins every N >= 3, recursive doubling N = 2.
  CHECK(all->resolved_name(CollectiveGroup{2, 0}, 1e6, ab) == "recursive_doubling");
  CHECK(all->resolved_name(CollectiveGroup{3, 0}, 1e6, ab) == "direct");
  CHECK(all->resolved_name(CollectiveGroup{64, 0}, 1024, ab) == "direct");
  CHECK(all->resolved_name(CollectiveGroup{64, 0}, 1e9, AlphaBeta{1e-3, 1e-12}) == "direct");
  for (int n : SIZES)
    for (double bytes : BYTES) {
      double best = std::numeric_limits<double>::infinity();
      for (const auto& name : CollectiveRegistry::instance().names()) {
        auto c = make(name);
        if (name == "auto" || c->operation() != "allreduce" || c->uses_servers()) continue;
        best = std::min(best, c->analytic_time_s(CollectiveGroup{n, 0}, bytes, ab));
      }
      CHECK(all->analytic_time_s(CollectiveGroup{n, 0}, bytes, ab) == best);
    }
  // Restricted: recursive doubling below the RD / halving-doubling crossover
  // M* = a log2N / (b (log2N - 2(N-1)/N)), halving-doubling above it.
  auto mpi = make("auto", json{{"candidates", json::array({"ring", "recursive_doubling", "halving_doubling"})}});
  const double crossover = ab.alpha_s * 6 / (ab.beta_s_per_byte * (6 - 2.0 * 63 / 64));
  CHECK(crossover == doctest::Approx(9302.3).epsilon(1e-4));
  CHECK(mpi->resolved_name(CollectiveGroup{64, 0}, crossover * 0.99, ab) == "recursive_doubling");
  CHECK(mpi->resolved_name(CollectiveGroup{64, 0}, crossover * 1.01, ab) == "halving_doubling");
  // The ring never beats halving-doubling at a power of two, but does at N = 3 for large M.
  CHECK(mpi->resolved_name(CollectiveGroup{3, 0}, 1e8, ab) == "ring");
  // The schedule follows the pick; resolve() returns the picked algorithm.
  const CollectiveGroup g{64, 0};
  CHECK(&mpi->resolve(g, 1024, ab) != mpi.get());
  CHECK(mpi->resolve(g, 1024, ab).analytic_time_s(g, 1024, ab) == mpi->analytic_time_s(g, 1024, ab));
  CHECK(mpi->rank_schedule(5, g, 1024).size() == 6u);    // recursive doubling: log2 64 steps
  CHECK(mpi->rank_schedule(5, g, 1e8).size() == 12u);    // halving-doubling: 2 log2 64 steps
  CHECK(make("ring")->resolved_name(g, 1024, ab).empty());
}

TEST_CASE("collectives: topology-aware multitree adopts only neighbours and keeps its closed form") {
  for (int n : {3, 7, 16}) {
    // A ring neighbourhood: rank r touches r-1 and r+1 only.
    auto ring = std::make_shared<std::vector<std::vector<int>>>(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      auto& nb = (*ring)[static_cast<std::size_t>(r)];
      nb = {(r + n - 1) % n, (r + 1) % n};
      std::sort(nb.begin(), nb.end());
      nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    }
    const CollectiveGroup g(n, 0, ring);
    auto mt = make("multitree");
    for (int r = 0; r < n; ++r)
      for (const auto& step : mt->rank_schedule(r, g, 1e6))
        for (const auto& op : step.ops) {
          const auto& nb = (*ring)[static_cast<std::size_t>(r)];
          CHECK(std::find(nb.begin(), nb.end(), op.peer) != nb.end());
        }
    // Still single-ported per tick, so the reference-platform closed form holds.
    check_collective("multitree on a ring neighbourhood", *mt, g);
    // A path forces deeper trees than the complete graph: never fewer ticks.
    CHECK(mt->analytic_time_s(g, 1e6, AlphaBeta{1e-6, 1e-9}) >=
          mt->analytic_time_s(CollectiveGroup(n), 1e6, AlphaBeta{1e-6, 1e-9}));
  }
}

TEST_CASE("collectives: ps with one worker pushes its gradient and pulls the parameters back") {
  // One worker, S servers: the push is S flows of M/S sharing the worker's uplink (alpha + M beta),
  // the pull S flows of M/S sharing its downlink (alpha + M beta): T = 2 alpha + 2 M beta for every S.
  const auto ps = make("ps");
  for (const auto& ab : NETWORKS)
    for (double m : BYTES)
      for (int servers : {1, 2, 4}) {
        CAPTURE(servers);
        CAPTURE(m);
        const CollectiveGroup g{1, servers};
        const double expected = 2 * ab.alpha_s + 2 * m * ab.beta_s_per_byte;
        CHECK(ps->analytic_time_s(g, m, ab) == doctest::Approx(expected).epsilon(1e-12));
        const Schedules steps = stepwise(*ps, g, m);
        REQUIRE(steps[0].size() == 2u);  // the worker: push then pull, M/S to and from every server
        CHECK(steps[0][0].ops.size() == static_cast<std::size_t>(servers));
        for (const auto& op : steps[0][0].ops) {
          CHECK(op.kind == RankOp::Kind::SEND);
          CHECK(op.bytes == doctest::Approx(m / servers).epsilon(1e-15));
        }
        for (const auto& op : steps[0][1].ops) CHECK(op.kind == RankOp::Kind::RECV);
        for (int s = 1; s <= servers; ++s) CHECK(steps[static_cast<std::size_t>(s)].size() == 2u);
        const auto totals = check_matching(steps);
        CHECK(totals.size() == static_cast<std::size_t>(2 * servers));
        CHECK(evaluate(steps, ab.alpha_s, ab.beta_s_per_byte) == doctest::Approx(expected).epsilon(1e-6));
        CHECK(evaluate(pipelined(*ps, g, m), ab.alpha_s, ab.beta_s_per_byte) == doctest::Approx(expected).epsilon(1e-6));
      }
  CHECK_THROWS_WITH_AS((void)ps->analytic_time_s(CollectiveGroup{1, 0}, 1, AlphaBeta{1, 1}),
                       "ps: the group has no parameter server (servers must be >= 1)", std::invalid_argument);
}

TEST_CASE("collectives: hierarchical takes G from the platform and pays each phase's link class") {
  const double m = 1048576.0;
  auto h = make("hierarchical");  // no gpus_per_node param: the group's, else 8
  CollectiveGroup g(8, 0);
  // Without platform nodes: G = 8, one node, phases 1 and 3 only.
  CHECK(h->rank_schedule(0, g, m).size() == 2u);
  g.ranks_per_node = 4;  // two nodes of 4: leaders 0 and 4
  CHECK(h->rank_schedule(0, g, m).size() == 1u + 2u + 1u);
  CHECK(h->rank_schedule(5, g, m).front().ops.front().peer == 4);
  check_collective("hierarchical, G from the group", *h, g);
  // Link classes: phases 1 and 3 pay the local pair, the leaders' ring the global one:
  //   2 (a_l + (G-1) M b_l) + 2 (L-1) (a + M b / L), G = 4, L = 2.
  AlphaBeta ab{4e-6, 8.0 / 100e9};
  ab.local = LinkClass{2e-6, 8.0 / 2400e9};
  CHECK(h->analytic_time_s(g, m, ab) ==
        doctest::Approx(2 * (2e-6 + 3 * m * 8.0 / 2400e9) + 2 * (4e-6 + m / 2 * 8.0 / 100e9)).epsilon(1e-12));
  // Without a local pair every phase pays the global one (the reference star).
  CHECK(ab.intra().alpha_s == 2e-6);
  CHECK(AlphaBeta(1e-6, 1e-9).intra().beta_s_per_byte == 1e-9);
  // The param still sets G where the platform has no nodes; agreeing with the platform is fine.
  auto h4 = make("hierarchical", json{{"gpus_per_node", 4}});
  CHECK(h4->analytic_time_s(CollectiveGroup(8, 0), m, ab) == h->analytic_time_s(g, m, ab));
  CHECK(h4->analytic_time_s(g, m, ab) == h->analytic_time_s(g, m, ab));
  // ... contradicting it is refused at the param's path, naming both values.
  auto h8 = make("hierarchical", json{{"gpus_per_node", 8}});
  CHECK_THROWS_WITH_AS((void)h8->analytic_time_s(g, m, ab),
                       "/training/collective/params/gpus_per_node: gpus_per_node = 8 contradicts the platform's 4 GPUs "
                       "per node (the hierarchical topology's gpus_per_node); leave it out to use the platform's",
                       ConfigError);
}

// ---------------------------------------------------------------- rank_steps: the schedule one step at a time

TEST_CASE("collectives: rank_steps gives every rank's rank_schedule, step by step, for every algorithm") {
  std::vector<std::pair<std::string, json>> algorithms;
  for (const auto& name : CollectiveRegistry::instance().names()) algorithms.emplace_back(name, json::object());
  algorithms.emplace_back("ring", json{{"segments", 3}});
  for (const auto& [name, params] : algorithms) {
    const auto coll = make(name, params);
    for (const int n : SIZES) {
      const CollectiveGroup group{n, coll->uses_servers() ? 2 : 0};
      for (int r = 0; r < group.size(); ++r) {
        CAPTURE(name);
        CAPTURE(n);
        CAPTURE(r);
        const auto expected = coll->rank_schedule(r, group, BYTES[1]);
        const auto source = coll->rank_steps(r, group, BYTES[1]);
        std::size_t i = 0;
        for (RankStep step; source->next(step); ++i) {
          REQUIRE(i < expected.size());
          CHECK(step.latency_steps == expected[i].latency_steps);
          REQUIRE(step.ops.size() == expected[i].ops.size());
          for (std::size_t k = 0; k < step.ops.size(); ++k) {
            CHECK(step.ops[k].kind == expected[i].ops[k].kind);
            CHECK(step.ops[k].peer == expected[i].ops[k].peer);
            CHECK(step.ops[k].bytes == expected[i].ops[k].bytes);
          }
        }
        CHECK(i == expected.size());
      }
    }
  }
}
