// The event-driven sync models end to end (event_triggered, selective_sync, ordered_gradients),
// replaying hand-written training traces. Every expectation is
// derived here from the trace the test writes (its `sent` flags and tensor sizes) and the
// platform (bandwidth, latency), never copied from a run.
#include "tests/support/cli.hpp"

#include <algorithm>

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr double LAT = 1e-6;     // every link
constexpr double BW = 10e9 / 8;  // 10 Gbps
constexpr double FWD = 1e-3, BWD = 2e-3, OPT = 1e-3;

/// A synthetic workload of `layers` layers of `grad_bytes` each on a star of `workers`.
json scenario(int workers, int layers, double grad_bytes, int iterations, const json& sync) {
  return json{{"name", "t"},
              {"platform", {{"topology", "star"}, {"workers", workers},
                            {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
              {"network", {{"fidelity", "flow"}}},
              {"workload", {{"synthetic", {{"layers", layers}, {"forward_s", "1ms"}, {"backward_s", "2ms"},
                                           {"grad_bytes", grad_bytes}, {"optimizer_s", "1ms"}}},
                            {"iterations", iterations}}},
              {"training", {{"sync", sync}}},
              {"output", {{"timeline", false}}}};
}

/// A trace of `norms` [k][w][i] with `sent` under `algorithm`, tensors of `numel` fp32 elements.
json trace(const json& algorithm, const std::vector<std::int64_t>& numel, const json& norms, const json& sent) {
  json tensors = json::array();
  for (std::size_t i = 0; i < numel.size(); ++i) tensors.push_back({{"name", fmt::format("layer{}.weight", i)}, {"numel", numel[i]}});
  const auto k = norms.size();
  const auto n = norms[0].size();
  return {{"format", "ddlsim-training-trace"}, {"version", 1}, {"model", "hand"}, {"workers", n}, {"iterations", k},
          {"batch_size", 8}, {"dtype_bytes", 4}, {"algorithm", algorithm}, {"tensors", tensors},
          {"param_norm", norms}, {"grad_norm", norms}, {"sent", sent},
          {"epochs", {{{"epoch", 1}, {"last_iteration", k - 1}, {"train_loss", 0.3}, {"train_accuracy", 0.9},
                       {"test_loss", 0.4}, {"test_accuracy", 0.875}}}},
          {"provenance", {{"tool", "hand-written in the test"}}}};
}

/// Every tensor of every worker has the same norm sequence.
json flat_norms(int iterations, int workers, int tensors, double step) {
  json out = json::array();
  for (int k = 0; k < iterations; ++k) {
    json per_worker = json::array();
    for (int w = 0; w < workers; ++w) per_worker.push_back(std::vector<double>(static_cast<std::size_t>(tensors), 1.0 + step * k));
    out.push_back(per_worker);
  }
  return out;
}

json flags(int iterations, int workers, int tensors, const std::function<int(int)>& per_iteration) {
  json out = json::array();
  for (int k = 0; k < iterations; ++k) {
    json per_worker = json::array();
    for (int w = 0; w < workers; ++w) per_worker.push_back(std::vector<int>(static_cast<std::size_t>(tensors), per_iteration(k)));
    out.push_back(per_worker);
  }
  return out;
}

struct Run {
  int exit_code = 0;
  std::string err;
  json summary;
  ddlsim::test::Csv csv;  // iterations.csv, its rows worker by worker
};

Run run(const TempDir& tmp, const std::string& name, const json& sc, const json& tr) {
  tmp.write(name + "_trace.json", tr.dump());
  const std::string file = tmp.write(name + ".json", sc.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  Run out{r.exit_code, r.err, {}, {}};
  if (r.exit_code != 0) return out;
  out.summary = json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
  out.csv = ddlsim::test::Csv::read(tmp.path() / name / "iterations.csv");
  // iterations.csv lists iteration by iteration; these tests read worker by worker.
  const auto worker = out.csv.column("worker");
  std::stable_sort(out.csv.rows.begin(), out.csv.rows.end(), [worker](const auto& a, const auto& b) {
    return std::stoi(a.at(worker)) < std::stoi(b.at(worker));
  });
  return out;
}

json event_sync(const std::string& trace_file, const json& extra = json::object()) {
  json params = {{"trace", trace_file}};
  params.update(extra);
  return {{"name", "event_triggered"}, {"params", params}};
}

}  // namespace

TEST_CASE("event_triggered replays a hand-written 2-worker, 3-tensor trace: exactly the messages and bytes it lists") {
  TempDir tmp;
  // Constant threshold 0.5, pass 1 always sends. Tensors of 1, 3 and 2 MB (the profile's 3 x 2 MB).
  const std::vector<std::int64_t> numel{250'000, 750'000, 500'000};
  const json norms = {{{1.0, 2.0, 0.1}, {1.0, 2.0, 0.1}},
                      {{1.2, 2.6, 0.1}, {1.0, 2.5, 0.7}},
                      {{1.6, 2.7, 0.1}, {1.0, 3.0, 0.7}},
                      {{1.7, 3.3, 0.1}, {1.0, 3.0, 1.3}}};
  const json sent = {{{1, 1, 1}, {1, 1, 1}}, {{0, 1, 0}, {0, 1, 1}}, {{1, 0, 0}, {0, 1, 0}}, {{0, 1, 0}, {0, 0, 1}}};
  const json algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0.5}, {"initial_comm_passes", 2}};
  const auto r = run(tmp, "two", scenario(2, 3, 2e6, 4, event_sync("two_trace.json")), trace(algo, numel, norms, sent));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // From the listed flags: per worker and iteration, each sent tensor is put to the left and the
  // right neighbour (with 2 workers both are the other worker), one event each.
  std::int64_t events = 0;
  double bytes = 0;
  for (std::size_t w = 0; w < 2; ++w) {
    for (std::size_t k = 0; k < 4; ++k) {
      int row_events = 0;
      double row_seconds = 0;
      for (std::size_t i = 0; i < 3; ++i)
        if (sent[k][w][i] == 1) {
          row_events += 2;
          bytes += 2 * 4.0 * static_cast<double>(numel[i]);
          // Sequential puts (the seed's lock/put/unlock): each alone on the sender's uplink and the
          // receiver's downlink: two links' latency plus the bytes at the link bandwidth.
          row_seconds += 2 * (2 * LAT + 4.0 * static_cast<double>(numel[i]) / BW);
        }
      events += row_events;
      const std::size_t row = w * 4 + k;
      CAPTURE(w);
      CAPTURE(k);
      CHECK(r.csv.integer(row, "events_sent") == row_events);
      CHECK(r.csv.integer(row, "events_saved") == 6 - row_events);
      CHECK(r.csv.number(row, "duration_s") == doctest::Approx(3 * (FWD + BWD) + OPT + row_seconds).epsilon(1e-9));
    }
  }
  CHECK(r.csv.header_line().ends_with(",events_sent,events_saved"));
  CHECK(events == 26);  // the listed flags, counted by hand: 2 x (6 + 7)
  const auto& e = r.summary["events"];
  CHECK(e["sent"] == events);
  CHECK(e["always_send_baseline"] == 2 * 4 * 6);
  CHECK(e["saved"] == 48 - events);
  CHECK(e["bytes_sent_by_workers"].get<double>() == doctest::Approx(bytes).epsilon(1e-12));
  CHECK(e["unit"] == "tensor put to one neighbour");
  CHECK(e["decisions"]["trace"]["final_epoch"]["test_accuracy"] == 0.875);
  CHECK(r.summary["sync_settings"]["threshold"] == "constant");
}

TEST_CASE("event_triggered with threshold 0 sends every tensor every iteration and equals gossip on a ring") {
  TempDir tmp;
  const int n = 4, layers = 4, its = 3;
  const json algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0}, {"initial_comm_passes", 0}};
  const auto tr = trace(algo, std::vector<std::int64_t>(layers, 500'000), flat_norms(its, n, layers, 0.0),
                        flags(its, n, layers, [](int) { return 1; }));
  const auto ev = run(tmp, "ev", scenario(n, layers, 2e6, its, event_sync("ev_trace.json", {{"puts", "concurrent"}})), tr);
  REQUIRE_MESSAGE(ev.exit_code == 0, ev.err);
  const auto go = run(tmp, "go", scenario(n, layers, 2e6, its, {{"name", "gossip"}}), tr);
  REQUIRE_MESSAGE(go.exit_code == 0, go.err);
  REQUIRE(ev.csv.size() == go.csv.size());
  // Gossip's closed form on this star (tests/engine/sync_models_test.cpp): compute, then the model
  // to both neighbours through one uplink.
  const double expected = layers * (FWD + BWD) + OPT + 2 * LAT + 2 * layers * 2e6 / BW;
  for (std::size_t i = 0; i < ev.csv.size(); ++i) {
    CHECK(ev.csv.number(i, "duration_s") == doctest::Approx(go.csv.number(i, "duration_s")).epsilon(1e-9));
    CHECK(ev.csv.number(i, "duration_s") == doctest::Approx(expected).epsilon(1e-9));
    CHECK(ev.csv.at(i, "events_saved") == "0");
  }
  CHECK(ev.summary["comm_bytes_per_iteration"].get<double>() ==
        doctest::Approx(go.summary["comm_bytes_per_iteration"].get<double>()).epsilon(1e-12));
  // Messages: one per tensor per neighbour, against gossip's one model per neighbour.
  CHECK(ev.summary["messages_per_iteration"].get<double>() ==
        doctest::Approx(layers * go.summary["messages_per_iteration"].get<double>()).epsilon(1e-12));
  CHECK(ev.summary["events"]["saved"] == 0);
}

TEST_CASE("event_triggered with a threshold above every norm change sends only during the initial passes") {
  TempDir tmp;
  const int n = 3, layers = 2, its = 5, passes = 3;  // passes 1 and 2 send
  const json algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 1e6}, {"initial_comm_passes", passes}};
  const auto tr = trace(algo, std::vector<std::int64_t>(layers, 500'000), flat_norms(its, n, layers, 0.25),
                        flags(its, n, layers, [&](int k) { return k + 1 < passes ? 1 : 0; }));
  const auto r = run(tmp, "hi", scenario(n, layers, 2e6, its, event_sync("hi_trace.json")), tr);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.summary["events"]["sent"] == n * 2 * layers * (passes - 1));
  CHECK(r.summary["events"]["always_send_baseline"] == n * 2 * layers * its);
  for (std::size_t i = 0; i < r.csv.size(); ++i) {
    const int k = r.csv.integer(i, "iteration");
    CHECK(r.csv.integer(i, "events_sent") == (k + 1 < passes ? 2 * layers : 0));
    // Without a send an iteration is its compute alone.
    if (k + 1 >= passes) CHECK(r.csv.number(i, "duration_s") == doctest::Approx(layers * (FWD + BWD) + OPT).epsilon(1e-12));
  }
}

TEST_CASE("event_triggered refuses a trace that does not match the scenario, naming the JSON path") {
  TempDir tmp;
  const json algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0}, {"initial_comm_passes", 0}};
  const auto tr = trace(algo, {500'000, 500'000}, flat_norms(3, 2, 2, 0.0), flags(3, 2, 2, [](int) { return 1; }));
  const auto workers = run(tmp, "w", scenario(3, 2, 2e6, 3, event_sync("w_trace.json")), tr);
  CHECK(workers.exit_code == 2);
  CHECK(workers.err ==
        "ddlsim: error: /training/sync/params/trace: training trace \"w_trace.json\" has 2 workers, the platform 3; "
        "replaying a trace needs the same workers (record one with --workers 3, or use \"decisions\": \"surrogate\")\n");
  const auto tensors = run(tmp, "t", scenario(2, 3, 2e6, 3, event_sync("t_trace.json")), tr);
  CHECK(tensors.exit_code == 2);
  CHECK(tensors.err ==
        "ddlsim: error: /training/sync/params/trace: training trace \"t_trace.json\" is of model \"hand\" with 2 tensors "
        "of 4000000 bytes in all; the profile \"synthetic\" has 6000000 gradient bytes: use a profile of the traced model\n");
  const auto longer = run(tmp, "l", scenario(2, 2, 2e6, 4, event_sync("l_trace.json")), tr);
  CHECK(longer.exit_code == 2);
  CHECK(longer.err ==
        "ddlsim: error: /training/sync/params/trace: training trace \"l_trace.json\" has 3 iterations, the workload asks "
        "for 4; set /workload/iterations to at most 3\n");
  const auto other = run(tmp, "o", scenario(2, 2, 2e6, 3, event_sync("o_trace.json", {{"threshold", "adaptive"}})), tr);
  CHECK(other.exit_code == 2);
  CHECK(other.err ==
        "ddlsim: error: /training/sync/params/threshold: adaptive here, but the training trace \"o_trace.json\" was "
        "recorded with constant; other settings give other numerics: record a trace with them "
        "(tools/record_training.py) or leave \"threshold\" out\n");
}

namespace {

json with_bucketing(json sc, bool overlap) {
  sc["training"]["bucketing"] = {{"overlap", overlap}};
  return sc;
}

/// Per-iteration durations of a run, in row order.
std::vector<double> durations(const Run& r) {
  std::vector<double> out;
  for (std::size_t i = 0; i < r.csv.size(); ++i) out.push_back(r.csv.number(i, "duration_s"));
  return out;
}

}  // namespace

TEST_CASE("selective_sync with delta 0 synchronises every iteration: bsp without overlap plus the flag all-reduce") {
  TempDir tmp;
  const int n = 4, layers = 4, its = 3;
  const json algo = {{"name", "selective_sync"}, {"delta", 0}};
  const auto tr = trace(algo, std::vector<std::int64_t>(layers, 500'000), flat_norms(its, n, layers, 0.5),
                        flags(its, n, layers, [](int) { return 1; }));
  const auto sel = run(tmp, "sel", with_bucketing(scenario(n, layers, 2e6, its, {{"name", "selective_sync"}, {"params", {{"trace", "sel_trace.json"}}}}), false), tr);
  REQUIRE_MESSAGE(sel.exit_code == 0, sel.err);
  const auto bsp = run(tmp, "bsp", with_bucketing(scenario(n, layers, 2e6, its, {{"name", "bsp"}}), false), tr);
  REQUIRE_MESSAGE(bsp.exit_code == 0, bsp.err);
  // The flags: a ring all-reduce of 4 bytes among the 4 workers: 2(N-1) steps, each a 1-byte
  // chunk over two links, after the collective call's fixed cost (10 us by default).
  const double flag = 10e-6 + 2 * (n - 1) * (2 * LAT + (4.0 / n) / BW);
  const auto a = durations(sel), b = durations(bsp);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i] + flag).epsilon(1e-9));
  CHECK(sel.summary["events"]["sent"] == n * its);
  CHECK(sel.summary["events"]["decisions"]["synchronised_fraction"] == 1.0);
}

TEST_CASE("selective_sync synchronises only the iterations where a worker flagged, and reports the fraction") {
  TempDir tmp;
  const int n = 2, layers = 2, its = 4;
  // Total gradient norms G_k = sqrt(2) x norm: worker 0 steps 1, 1, 2, 2 (flags k = 0 and 2 at
  // delta 0.5); worker 1 is flat (flags k = 0 only). Synchronised: iterations 0 and 2.
  json norms = json::array();
  const std::vector<double> w0{1, 1, 2, 2};
  for (int k = 0; k < its; ++k) norms.push_back({{w0[static_cast<std::size_t>(k)], w0[static_cast<std::size_t>(k)]}, {1.0, 1.0}});
  const json sent = {{{1, 1}, {1, 1}}, {{0, 0}, {0, 0}}, {{1, 1}, {0, 0}}, {{0, 0}, {0, 0}}};
  const auto tr = trace({{"name", "selective_sync"}, {"delta", 0.5}}, {500'000, 500'000}, norms, sent);
  const auto r = run(tmp, "sel", scenario(n, layers, 2e6, its, {{"name", "selective_sync"}, {"params", {{"trace", "sel_trace.json"}}}}), tr);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto d = durations(r);
  const double local = layers * (FWD + BWD) + OPT;
  const double flag = 10e-6 + 2 * (n - 1) * (2 * LAT + (4.0 / n) / BW);
  // Unsynchronised iterations: the local step and the flag exchange, nothing else.
  CHECK(d[1] == doctest::Approx(local + flag).epsilon(1e-9));
  CHECK(d[3] == doctest::Approx(local + flag).epsilon(1e-9));
  CHECK(d[0] > local + flag + 4e6 / BW);  // the model's all-reduce: at least its bytes once
  CHECK(r.summary["events"]["decisions"]["synchronised_fraction"] == 0.5);
  CHECK(r.summary["events"]["sent"] == 2 * n);
}

TEST_CASE("ordered_gradients with m = N is bsp on a parameter server without overlap plus the norm exchange") {
  TempDir tmp;
  const int n = 4, layers = 4, its = 3;
  const json algo = {{"name", "ordered_gradients"}, {"m", n}};
  const auto tr = trace(algo, std::vector<std::int64_t>(layers, 500'000), flat_norms(its, n, layers, 0.5),
                        flags(its, n, layers, [](int) { return 1; }));
  auto ps = [&](json sc) {
    sc["platform"]["parameter_servers"] = 1;
    return with_bucketing(sc, false);
  };
  const auto og = run(tmp, "og", ps(scenario(n, layers, 2e6, its, {{"name", "ordered_gradients"}, {"params", {{"trace", "og_trace.json"}}}})), tr);
  REQUIRE_MESSAGE(og.exit_code == 0, og.err);
  const auto bsp = run(tmp, "bsp", ps(scenario(n, layers, 2e6, its, {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}})), tr);
  REQUIRE_MESSAGE(bsp.exit_code == 0, bsp.err);
  // The norms: N scalars of 4 bytes share the server's downlink, the N answers its uplink.
  const double control = 2 * (2 * LAT + n * 4.0 / BW);
  const auto a = durations(og), b = durations(bsp);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i] + control).epsilon(1e-9));
  CHECK(og.summary["events"]["sent"] == n * its);
}

TEST_CASE("ordered_gradients with m < N: only the selected push, m/N of the gradient bytes plus the control scalars") {
  TempDir tmp;
  const int n = 4, layers = 2, its = 3, m = 1;
  // Worker k mod 4 has the largest norms in iteration k.
  json norms = json::array(), sent = json::array();
  for (int k = 0; k < its; ++k) {
    json nk = json::array(), sk = json::array();
    for (int w = 0; w < n; ++w) {
      const bool top = w == k % n;
      nk.push_back({top ? 2.0 : 1.0, top ? 2.0 : 1.0});
      sk.push_back({top ? 1 : 0, top ? 1 : 0});
    }
    norms.push_back(nk);
    sent.push_back(sk);
  }
  const auto tr = trace({{"name", "ordered_gradients"}, {"m", m}}, {500'000, 500'000}, norms, sent);
  json sc = scenario(n, layers, 2e6, its, {{"name", "ordered_gradients"}, {"params", {{"trace", "og_trace.json"}}}});
  sc["platform"]["parameter_servers"] = 1;
  const auto r = run(tmp, "og", sc, tr);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const double model = layers * 2e6;
  CHECK(r.summary["events"]["bytes_sent_by_workers"].get<double>() == doctest::Approx(its * (m * model + n * 4.0)).epsilon(1e-12));
  CHECK(r.summary["events"]["sent"] == m * its);
  CHECK(r.summary["events"]["always_send_baseline"] == n * its);
  for (std::size_t i = 0; i < r.csv.size(); ++i)
    CHECK(r.csv.integer(i, "events_sent") == (r.csv.integer(i, "worker") == r.csv.integer(i, "iteration") % n ? 1 : 0));
}

TEST_CASE("event_triggered surrogate: the trace's initial passes, then its fitted rates, over the profile's layers") {
  TempDir tmp;
  // Recorded on 2 workers and 2 tensors: only the initial passes (p = 1, 2) send.
  const json quiet_algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 1e6}, {"initial_comm_passes", 3}};
  const auto quiet = trace(quiet_algo, {500'000, 500'000}, flat_norms(6, 2, 2, 0.25), flags(6, 2, 2, [](int k) { return k < 2 ? 1 : 0; }));
  // Simulated on 5 workers with a 3-layer profile (not the trace's model: the surrogate's messages are the layers).
  const json params = {{"decisions", "surrogate"}, {"windows", 2}};
  const auto r = run(tmp, "q", scenario(5, 3, 2e6, 8, event_sync("q_trace.json", params)), quiet);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.summary["events"]["sent"] == 5 * 2 * 3 * 2);  // workers x neighbours x layers x initial iterations
  CHECK(r.summary["events"]["always_send_baseline"] == 5 * 2 * 3 * 8);
  CHECK(r.summary["events"]["decisions"]["source"] == "surrogate");
  // Every tensor sent after the initial passes: rate 1, every message every iteration.
  const json loud_algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0}, {"initial_comm_passes", 3}};
  const auto loud = trace(loud_algo, {500'000, 500'000}, flat_norms(6, 2, 2, 0.25), flags(6, 2, 2, [](int) { return 1; }));
  const auto all = run(tmp, "l", scenario(5, 3, 2e6, 8, event_sync("l_trace.json", params)), loud);
  REQUIRE_MESSAGE(all.exit_code == 0, all.err);
  CHECK(all.summary["events"]["saved"] == 0);
}

TEST_CASE("rings of 2 and 3: event_triggered and gossip follow one rule, left and right, or distinct neighbours") {
  // Threshold 0 and concurrent puts: every tensor to left and right every iteration. At N = 2 both
  // are the one other worker: two puts of each tensor (the seed's code puts to both windows), as
  // gossip sends its model twice; with distinct_neighbours, once. At N = 3 the rule changes nothing.
  TempDir tmp;
  const int layers = 2, its = 2;
  const double grad = 2e6;
  for (const auto& [n, distinct] : {std::pair{2, false}, std::pair{2, true}, std::pair{3, false}, std::pair{3, true}}) {
    CAPTURE(n);
    CAPTURE(distinct);
    const json algo = {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0}, {"initial_comm_passes", 0}};
    const auto tr = trace(algo, std::vector<std::int64_t>(layers, 500'000), flat_norms(its, n, layers, 0.0),
                          flags(its, n, layers, [](int) { return 1; }));
    const std::string name = fmt::format("n{}{}", n, distinct);
    const auto ev = run(tmp, name + "ev",
                        scenario(n, layers, grad, its,
                                 event_sync(name + "ev_trace.json", {{"puts", "concurrent"}, {"distinct_neighbours", distinct}})),
                        tr);
    REQUIRE_MESSAGE(ev.exit_code == 0, ev.err);
    const auto go = run(tmp, name + "go",
                        scenario(n, layers, grad, its, {{"name", "gossip"}, {"params", {{"distinct_neighbours", distinct}}}}), tr);
    REQUIRE_MESSAGE(go.exit_code == 0, go.err);
    const int peers = n == 2 && distinct ? 1 : 2;
    CHECK(ev.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(n * peers * layers * grad).epsilon(1e-12));
    CHECK(go.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(n * peers * layers * grad).epsilon(1e-12));
    CHECK(ev.summary["events"]["always_send_baseline"].get<double>() ==
          doctest::Approx(static_cast<double>(its) * n * peers * layers).epsilon(1e-12));
    // The same bytes through the same uplink at the same time: the same iteration times.
    const double expected = layers * (FWD + BWD) + OPT + 2 * LAT + peers * layers * grad / BW;
    for (std::size_t i = 0; i < ev.csv.size(); ++i) {
      CHECK(ev.csv.number(i, "duration_s") == doctest::Approx(expected).epsilon(1e-9));
      CHECK(go.csv.number(i, "duration_s") == doctest::Approx(expected).epsilon(1e-9));
    }
  }
}
