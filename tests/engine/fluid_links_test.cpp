// engine/fluid_links.cpp: weighted max-min sharing with per-hub virtual time. Every expectation
// is a closed form of processor sharing, or an independent solver written here: at every event
// it re-solves the sharing from scratch by the fixed point of max-min (each flow's rate is the
// smallest fair share among its links), with no virtual time, no heaps and no switching.
#include "engine/fluid_links.hpp"

#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

using ddlsim::sim::FluidLinks;

namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

/// Runs every flow to its end; returns each flow's end time by its place in `starts` (the ids
/// FluidLinks gives are reused once a flow ends).
std::map<std::int64_t, double> run_all(FluidLinks& net, const std::vector<std::pair<double, FluidLinks::Flow>>& starts) {
  std::map<std::int64_t, double> ends;
  std::map<std::int64_t, std::int64_t> live;  // id -> place
  auto ended = [&](const std::vector<std::int64_t>& ids, double t) {
    for (const auto id : ids) {
      ends[live.at(id)] = t;
      live.erase(id);
    }
  };
  std::size_t next = 0;
  while (next < starts.size() || net.running() > 0) {
    const double t_start = next < starts.size() ? starts[next].first : INF;
    const double t_end = net.next_completion();
    if (t_end <= t_start) {
      ended(net.advance(t_end), t_end);
    } else {
      ended(net.advance(t_start), t_start);
      const auto id = net.start(starts[next].second, t_start);
      REQUIRE(live.count(id) == 0);  // unique among running flows
      live[id] = static_cast<std::int64_t>(next);
      ++next;
    }
  }
  return ends;
}

/// The reference: weighted max-min by progressive filling written plainly (O(n^2) per event),
/// flows' remaining units stepped from event to event.
struct Reference {
  std::vector<double> capacity;
  std::map<std::int64_t, double> run(const std::vector<std::pair<double, FluidLinks::Flow>>& starts) {
    struct F {
      FluidLinks::Flow spec;
      double remaining;
      double value = 0;
    };
    std::map<std::int64_t, F> running;
    std::map<std::int64_t, double> ends;
    std::size_t next = 0;
    double now = 0;
    auto solve = [&] {
      std::map<std::int64_t, bool> frozen;
      std::vector<double> left = capacity;
      for (auto& [id, f] : running) frozen[id] = false;
      while (true) {
        double best = INF;
        for (std::size_t l = 0; l < capacity.size(); ++l) {
          double w = 0;
          for (auto& [id, f] : running) {
            if (frozen[id]) continue;
            bool uses = f.spec.hub == static_cast<int>(l);
            for (int x : f.spec.locals) uses = uses || x == static_cast<int>(l);
            if (uses) w += 1 / f.spec.penalty;
          }
          if (w > 0) best = std::min(best, left[l] / w);
        }
        for (auto& [id, f] : running)
          if (!frozen[id]) best = std::min(best, f.spec.bound * f.spec.penalty);
        if (best == INF) break;
        // freeze the flows that reached `best`: on a saturated link, or at their bound
        std::vector<std::int64_t> now_frozen;
        for (auto& [id, f] : running) {
          if (frozen[id]) continue;
          bool at = f.spec.bound * f.spec.penalty <= best * (1 + 1e-15);
          std::vector<int> ls = f.spec.locals;
          ls.push_back(f.spec.hub);
          for (int l : ls) {
            double w = 0;
            for (auto& [id2, g] : running) {
              if (frozen[id2]) continue;
              bool uses = g.spec.hub == l;
              for (int x : g.spec.locals) uses = uses || x == l;
              if (uses) w += 1 / g.spec.penalty;
            }
            at = at || left[static_cast<std::size_t>(l)] / w <= best * (1 + 1e-15);
          }
          if (at) now_frozen.push_back(id);
        }
        for (auto id : now_frozen) {
          auto& f = running.at(id);
          f.value = std::min(best / f.spec.penalty, f.spec.bound);
          frozen[id] = true;
          left[static_cast<std::size_t>(f.spec.hub)] -= f.value;
          for (int l : f.spec.locals) left[static_cast<std::size_t>(l)] -= f.value;
        }
      }
    };
    std::int64_t id = 0;
    while (next < starts.size() || !running.empty()) {
      double t_end = INF;
      for (auto& [i, f] : running) t_end = std::min(t_end, now + f.remaining / (f.value * f.spec.factor));
      const double t_start = next < starts.size() ? starts[next].first : INF;
      const double t = std::min(t_end, t_start);
      for (auto& [i, f] : running) f.remaining -= f.value * f.spec.factor * (t - now);
      now = t;
      for (auto it = running.begin(); it != running.end();) {
        if (it->second.remaining <= 1e-9 * it->second.spec.units) {
          ends[it->first] = now;
          it = running.erase(it);
        } else {
          ++it;
        }
      }
      if (t_start <= t) running[id++] = F{starts[next++].second, starts[next - 1].second.units};
      solve();
    }
    return ends;
  }
};

FluidLinks::Flow flow(int hub, std::vector<int> locals, double units, double penalty = 1, double bound = INF,
                      double factor = 1) {
  FluidLinks::Flow f;
  f.hub = hub;
  f.locals = std::move(locals);
  f.units = units;
  f.penalty = penalty;
  f.bound = bound;
  f.factor = factor;
  return f;
}

}  // namespace

TEST_CASE("fluid links: n equal flows into one hub share it: processor sharing's closed forms") {
  FluidLinks net;
  const int hub = net.add_link(100.0, true);
  std::vector<int> locals;
  for (int i = 0; i < 4; ++i) locals.push_back(net.add_link(1000.0, false));
  // sizes 10, 20, 30, 40 from t = 0: at 4 flows each runs at 25, so the first ends at 40/100 = 0.4;
  // then 3 at 33.3: the second's 10 more units take 0.3 (t = 0.7); the third's 10 at 50 take 0.2
  // (t = 0.9); the last's 10 at 100 take 0.1 (t = 1.0): sum of sizes / capacity.
  std::vector<std::pair<double, FluidLinks::Flow>> starts;
  for (int i = 0; i < 4; ++i) starts.push_back({0.0, flow(hub, {locals[static_cast<std::size_t>(i)]}, 10.0 * (i + 1))});
  const auto ends = run_all(net, starts);
  CHECK(ends.at(0) == doctest::Approx(0.4).epsilon(1e-12));
  CHECK(ends.at(1) == doctest::Approx(0.7).epsilon(1e-12));
  CHECK(ends.at(2) == doctest::Approx(0.9).epsilon(1e-12));
  CHECK(ends.at(3) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(net.stats().explicit_events == 0);  // no local link and no bound could bind
}

TEST_CASE("fluid links: shares follow 1 over the sharing penalty as in CM02") {
  FluidLinks net;
  const int hub = net.add_link(90.0, true);
  const int a = net.add_link(1e6, false);
  const int b = net.add_link(1e6, false);
  net.start(flow(hub, {a}, 60.0, 1.0), 0.0);
  net.start(flow(hub, {b}, 60.0, 2.0), 0.0);
  const auto rates = net.rates();
  CHECK(rates.at(0) == doctest::Approx(60.0));  // 90 x (1/1) / (1/1 + 1/2)
  CHECK(rates.at(1) == doctest::Approx(30.0));
  CHECK(net.next_completion() == doctest::Approx(1.0));
  CHECK(net.advance(1.0) == std::vector<std::int64_t>{0});
  CHECK(net.rates().at(1) == doctest::Approx(90.0));  // alone: the whole hub
  CHECK(net.next_completion() == doctest::Approx(1.0 + 30.0 / 90.0));
}

TEST_CASE("fluid links: a worker's own link binds when its flows to several hubs exceed it") {
  FluidLinks net;
  const int h1 = net.add_link(100.0, true);
  const int h2 = net.add_link(100.0, true);
  const int w = net.add_link(50.0, false);
  const int v = net.add_link(1000.0, false);
  net.start(flow(h1, {w}, 25.0), 0.0);
  net.start(flow(h2, {w}, 50.0), 0.0);
  net.start(flow(h2, {v}, 100.0), 0.0);
  auto rates = net.rates();
  CHECK(rates.at(0) == doctest::Approx(25.0));  // w's 50 split in two
  CHECK(rates.at(1) == doctest::Approx(25.0));
  CHECK(rates.at(2) == doctest::Approx(75.0));  // the rest of h2
  CHECK(net.stats().explicit_events > 0);
  CHECK(net.next_completion() == doctest::Approx(1.0));
  net.advance(1.0);
  rates = net.rates();
  CHECK(rates.at(1) == doctest::Approx(50.0));  // now w's alone on h2: min(50, 100/2 share)
  CHECK(rates.at(2) == doctest::Approx(50.0));
}

TEST_CASE("fluid links: a flow's bound caps it and the others take the rest") {
  FluidLinks net;
  const int hub = net.add_link(100.0, true);
  const int a = net.add_link(1e6, false);
  const int b = net.add_link(1e6, false);
  net.start(flow(hub, {a}, 10.0, 1.0, 20.0), 0.0);
  net.start(flow(hub, {b}, 80.0), 0.0);
  CHECK(net.rates().at(0) == doctest::Approx(20.0));
  CHECK(net.rates().at(1) == doctest::Approx(80.0));
  CHECK(net.next_completion() == doctest::Approx(0.5));  // 10 / 20; the other's 80 / 80 = 1.0
  CHECK(net.advance(0.5) == std::vector<std::int64_t>{0});
  CHECK(net.next_completion() == doctest::Approx(0.5 + 40.0 / 100.0));
}

TEST_CASE("fluid links: the rate factor scales progress, not the share") {
  FluidLinks net;
  const int hub = net.add_link(100.0, true);
  const int a = net.add_link(1e6, false);
  net.start(flow(hub, {a}, 50.0, 1.0, INF, 0.5), 0.0);
  CHECK(net.rates().at(0) == doctest::Approx(100.0));
  CHECK(net.next_completion() == doctest::Approx(1.0));  // 50 units at 100 x 0.5
}

TEST_CASE("fluid links: random flows end when an independent max-min solver says") {
  // Servers' NICs as hubs, workers' links as locals; sizes, start times, penalties, bounds and
  // capacities drawn so that both ways of sharing are used and switched between.
  for (const int seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const int servers = 1 + seed % 4;
    const int workers = 3 + seed * 3;
    FluidLinks net;
    Reference ref;
    std::vector<int> hubs, locals;
    for (int s = 0; s < servers; ++s) {
      const double c = 50 + 100 * u(rng);
      hubs.push_back(net.add_link(c, true));
      ref.capacity.push_back(c);
    }
    for (int w = 0; w < workers; ++w) {
      const double c = (seed % 2 == 0 ? 5 : 40) + 60 * u(rng);
      locals.push_back(net.add_link(c, false));
      ref.capacity.push_back(c);
    }
    std::vector<std::pair<double, FluidLinks::Flow>> starts;
    double t = 0;
    for (int i = 0; i < 6 * workers; ++i) {
      t += u(rng) < 0.3 ? 0.0 : 0.05 * u(rng);  // some at the same instant
      const auto s = static_cast<std::size_t>(static_cast<int>(u(rng) * servers) % servers);
      const auto w = static_cast<std::size_t>(static_cast<int>(u(rng) * workers) % workers);
      const double penalty = seed % 3 == 0 ? 1.0 : 1e-6 * (1 + static_cast<int>(u(rng) * 3));
      const double bound = u(rng) < 0.2 ? 5 + 20 * u(rng) : INF;
      starts.push_back({t, flow(hubs[s], {locals[w]}, 1 + 20 * u(rng), penalty, bound, seed % 4 == 1 ? 0.92 : 1.0)});
    }
    const auto got = run_all(net, starts);
    const auto want = ref.run(starts);
    CAPTURE(seed);
    REQUIRE(got.size() == want.size());
    for (const auto& [id, end] : want) {
      CAPTURE(id);
      CHECK(got.at(id) == doctest::Approx(end).epsilon(1e-9));
    }
    CHECK(net.stats().explicit_events < net.stats().events);
  }
}

TEST_CASE("fluid links: a thousand flows into four hubs stay implicit and end together") {
  FluidLinks net;
  std::vector<int> hubs;
  for (int s = 0; s < 4; ++s) hubs.push_back(net.add_link(1000.0, true));
  std::vector<int> locals;
  for (int w = 0; w < 1024; ++w) locals.push_back(net.add_link(1000.0, false));
  for (int w = 0; w < 1024; ++w)
    for (int s = 0; s < 4; ++s) net.start(flow(hubs[static_cast<std::size_t>(s)], {locals[static_cast<std::size_t>(w)]}, 1.0), 0.0);
  // 1024 units into each 1000-unit hub: all end at 1.024, every flow in one event.
  CHECK(net.next_completion() == doctest::Approx(1.024).epsilon(1e-12));
  CHECK(net.advance(1.024).size() == 4096);
  CHECK(net.running() == 0);
  // Explicit only while the first 16 flows start (a worker's link then carries more than a hub's
  // level); the last 4,080 starts and the ending are implicit.
  CHECK(net.stats().explicit_events <= 16);
}
