// Where the event-driven sync models take their decisions from (models/event_decisions.cpp): the
// params that choose a trace or a surrogate, loading a trace and checking it against the scenario,
// the surrogate's windows, uniform draws and send rates fitted from a trace -- every rate counted
// here by hand from the trace's 0/1 decisions.
#include "models/error.hpp"
#include "models/event_decisions.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

const std::string PARAMS = "/training/sync/params";

DecisionSource read(const json& params, bool surrogate_needs_trace = true) {
  ObjectReader r(params, PARAMS);
  return read_decision_source(r, surrogate_needs_trace);
}

std::string refusal(const json& params, bool surrogate_needs_trace = true) {
  try {
    (void)read(params, surrogate_needs_trace);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

/// 2 workers, 3 iterations, tensors fc.weight (100) and fc.bias (10) under event_triggered with a
/// constant threshold 0.5 and 2 initial passes (iteration 0 always sends); decisions as the rule gives them.
json small_trace() {
  return {{"format", "ddlsim-training-trace"}, {"version", 1}, {"model", "tiny"}, {"workers", 2}, {"iterations", 3},
          {"batch_size", 8}, {"dtype_bytes", 4},
          {"algorithm", {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0.5}, {"initial_comm_passes", 2}}},
          {"tensors", {{{"name", "fc.weight"}, {"numel", 100}}, {{"name", "fc.bias"}, {"numel", 10}}}},
          {"param_norm", {{{1.0, 0.1}, {1.0, 0.1}}, {{1.7, 0.1}, {1.2, 0.1}}, {{1.8, 0.9}, {1.6, 0.1}}}},
          {"grad_norm", {{{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}}},
          {"sent", {{{1, 1}, {1, 1}}, {{1, 0}, {0, 0}}, {{0, 1}, {1, 0}}}},
          {"epochs", json::array()}};
}

/// One worker, `iterations` iterations, these tensors, under event_triggered with `passes` initial
/// passes and norms that never move: only the initial passes send.
json quiet_trace(const std::vector<std::pair<std::string, int>>& tensors, int iterations, int passes) {
  json t = small_trace();
  t["workers"] = 1;
  t["iterations"] = iterations;
  t["algorithm"]["initial_comm_passes"] = passes;
  t["tensors"] = json::array();
  for (const auto& [name, numel] : tensors) t["tensors"].push_back({{"name", name}, {"numel", numel}});
  for (const char* key : {"param_norm", "grad_norm", "sent"}) t[key] = json::array();
  for (int k = 0; k < iterations; ++k) {
    const int sent = k + 1 < passes ? 1 : 0;
    t["param_norm"].push_back({std::vector<double>(tensors.size(), 1.0)});
    t["grad_norm"].push_back({std::vector<double>(tensors.size(), 1.0)});
    t["sent"].push_back({std::vector<int>(tensors.size(), sent)});
  }
  return t;
}

/// A folder of its own for trace files, removed at the end of the test case.
struct TraceFolder {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("ddlsim-event-decisions-{}", ::getpid());
  TraceFolder() { std::filesystem::create_directories(dir); }
  ~TraceFolder() { std::filesystem::remove_all(dir); }
  void write(const std::string& name, const json& doc) const { std::ofstream(dir / name) << doc.dump(); }
  [[nodiscard]] SyncBinding binding(int workers, int iterations, const Profile* profile = nullptr) const {
    SyncBinding b;
    b.workers = workers;
    b.iterations = iterations;
    b.profile = profile;
    b.params_path = PARAMS;
    b.resolve = [d = dir](const std::string& f) { return (d / f).string(); };
    return b;
  }
};

}  // namespace

TEST_CASE("decision source: a trace by default, a surrogate with its windows, refused at the key's path") {
  const DecisionSource trace = read(json{{"trace", "t.json"}});
  CHECK_FALSE(trace.surrogate);
  CHECK(trace.trace_file == "t.json");
  CHECK(trace.windows == 10);
  CHECK(trace.path == PARAMS);
  const DecisionSource surrogate = read(json{{"decisions", "surrogate"}, {"trace", "t.json"}, {"windows", 4}});
  CHECK(surrogate.surrogate);
  CHECK(surrogate.windows == 4);
  // A surrogate given outright needs no trace where the model allows it.
  CHECK(read(json{{"decisions", "surrogate"}}, false).trace_file.empty());
  CHECK(refusal(json{{"decisions", "surrogate"}}, true) == "/training/sync/params/trace: missing required key");
  CHECK(refusal(json::object(), false) == "/training/sync/params/trace: missing required key");
  CHECK(refusal(json{{"trace", ""}}) ==
        "/training/sync/params/trace: expected the name of a training trace file (docs/traces.md; e.g. "
        "\"traces/eventgrad_cnn_event_adaptive_4w.json\"), got an empty string");
  CHECK(refusal(json{{"trace", "t.json"}, {"windows", 3}}) ==
        "/training/sync/params/windows: only with \"decisions\": \"surrogate\"");
  CHECK(refusal(json{{"decisions", "surrogate"}, {"trace", "t.json"}, {"windows", 0}}) ==
        "/training/sync/params/windows: expected an integer in [1, 10000], got 0");
  CHECK(refusal(json{{"decisions", "oracle"}, {"trace", "t.json"}}) ==
        "/training/sync/params/decisions: unknown value \"oracle\"; valid values are: trace, surrogate");
}

TEST_CASE("decision trace: loaded from the scenario's folder, checked against the algorithm, workers and iterations") {
  const TraceFolder folder;
  folder.write("t.json", small_trace());
  const DecisionSource trace = read(json{{"trace", "t.json"}});
  const auto loaded = load_decision_trace(trace, folder.binding(2, 3), "event_triggered");
  REQUIRE(loaded != nullptr);
  CHECK(loaded->model == "tiny");
  CHECK(loaded->algorithm.trigger.initial_comm_passes == 2);
  CHECK(load_decision_trace(read(json{{"decisions", "surrogate"}}, false), folder.binding(2, 3), "event_triggered") == nullptr);
  const std::string at = "/training/sync/params/trace: training trace \"t.json\" ";
  CHECK_THROWS_WITH_AS(load_decision_trace(trace, folder.binding(2, 3), "selective_sync"),
                       (at + "was recorded under \"event_triggered\", not \"selective_sync\"; record one with "
                             "tools/record_training.py --algorithm selective_sync").c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_decision_trace(trace, folder.binding(4, 3), "event_triggered"),
                       (at + "has 2 workers, the platform 4; replaying a trace needs the same workers (record one with "
                             "--workers 4, or use \"decisions\": \"surrogate\")").c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(load_decision_trace(trace, folder.binding(2, 5), "event_triggered"),
                       (at + "has 3 iterations, the workload asks for 5; set /workload/iterations to at most 3").c_str(),
                       ConfigError);
  // A surrogate is fitted from any trace of the algorithm: other workers and iterations are fine.
  const DecisionSource fitted = read(json{{"decisions", "surrogate"}, {"trace", "t.json"}});
  CHECK(load_decision_trace(fitted, folder.binding(8, 100), "event_triggered") != nullptr);
  CHECK_THROWS_WITH_AS(load_decision_trace(read(json{{"trace", "none.json"}}), folder.binding(2, 3), "event_triggered"),
                       fmt::format("/training/sync/params/trace: cannot open training trace file \"{}\"",
                                   (folder.dir / "none.json").string()).c_str(),
                       ConfigError);

  // Replaying: the traced tensors (100 + 10 fp32 elements = 440 B) must be the profile's gradients.
  Profile same, other;
  same.model = std::string("p");  // (a std::string: GCC 12 warns falsely on assigning the literal)
  other.model = same.model;
  same.layers = {Layer{"fc", 0, 0, 110, 440}};
  other.layers = {Layer{"fc", 0, 0, 100, 400}};
  CHECK_NOTHROW(check_trace_bytes(*loaded, folder.binding(2, 3, &same), trace));
  CHECK_THROWS_WITH_AS(check_trace_bytes(*loaded, folder.binding(2, 3, &other), trace),
                       "/training/sync/params/trace: training trace \"t.json\" is of model \"tiny\" with 2 tensors of "
                       "440 bytes in all; the profile \"p\" has 400 gradient bytes: use a profile of the traced model",
                       ConfigError);
  const json described = describe_source(trace, loaded.get());
  CHECK(described["source"] == "trace");
  CHECK(described["trace_file"] == "t.json");
  CHECK(described["trace"]["workers"] == 2);
  CHECK_FALSE(described.contains("windows"));
  CHECK(describe_source(fitted, nullptr) == json{{"source", "surrogate"}, {"windows", 10}});
}

TEST_CASE("surrogate windows: equal windows of ceil(span / windows) iterations, later ones held in the last") {
  // Iterations 2..11 (span 10) in 3 windows of 4: 2-5, 6-9, 10-11.
  for (int k = 0; k <= 5; ++k) CHECK(window_of(k, 2, 11, 3) == 0);
  for (int k = 6; k <= 9; ++k) CHECK(window_of(k, 2, 11, 3) == 1);
  CHECK(window_of(10, 2, 11, 3) == 2);
  CHECK(window_of(11, 2, 11, 3) == 2);
  CHECK(window_of(1000, 2, 11, 3) == 2);
  // As many windows as iterations: one each; more windows than iterations: still one each.
  for (int k = 0; k < 10; ++k) CHECK(window_of(k, 0, 9, 10) == k);
  CHECK(window_of(9, 0, 9, 50) == 9);
  CHECK(window_of(5, 7, 6, 3) == 0);  // an empty span
}

TEST_CASE("surrogate draws: uniform from 0 to 1 (1 excluded), a function of its four inputs alone") {
  const int n = 20000;
  double sum = 0, sum_sq = 0;
  int below_tenth = 0;
  std::set<double> distinct;
  for (int i = 0; i < n; ++i) {
    const double u = surrogate_uniform(42, static_cast<std::uint64_t>(i), 3, 7);
    REQUIRE(u >= 0);
    REQUIRE(u < 1);
    sum += u;
    sum_sq += u * u;
    below_tenth += u < 0.1 ? 1 : 0;
    distinct.insert(u);
  }
  // Mean 1/2 and variance 1/12 of U(0, 1): within 4 standard errors.
  const double mean = sum / n, variance = sum_sq / n - mean * mean;
  CHECK(std::abs(mean - 0.5) < 4 * std::sqrt(1.0 / 12 / n));
  CHECK(std::abs(variance - 1.0 / 12) < 0.005);
  CHECK(std::abs(below_tenth - 0.1 * n) < 4 * std::sqrt(n * 0.1 * 0.9));
  CHECK(distinct.size() == static_cast<std::size_t>(n));
  // The same inputs give the same draw; changing any one of them changes it.
  const double u = surrogate_uniform(1, 2, 3, 4);
  CHECK(surrogate_uniform(1, 2, 3, 4) == u);
  CHECK(surrogate_uniform(5, 2, 3, 4) != u);
  CHECK(surrogate_uniform(1, 5, 3, 4) != u);
  CHECK(surrogate_uniform(1, 2, 5, 4) != u);
  CHECK(surrogate_uniform(1, 2, 3, 5) != u);
}

TEST_CASE("surrogate rates: per window, the share of (iteration, worker) pairs that sent each tensor after the initial passes") {
  const auto t = TrainingTrace::read(small_trace(), "");
  DecisionSource two;
  two.windows = 2;
  two.path = PARAMS;
  const TensorRates r = fit_tensor_rates(t, two);
  // 2 initial passes: iteration 0 always sends; iterations 1 and 2 are fitted, one window each.
  CHECK(r.first == 1);
  CHECK(r.last == 2);
  // fc.weight sent by worker 0 at iteration 1, by worker 1 at iteration 2; fc.bias by worker 0 at iteration 2.
  CHECK(r.per_tensor == std::vector<std::vector<double>>{{0.5, 0.5}, {0.0, 0.5}});
  CHECK(r.rate(0, 0) == 1);  // an initial pass
  CHECK(r.rate(1, 1) == 0);
  CHECK(r.rate(1, 2) == 0.5);
  CHECK(r.rate(1, 40) == 0.5);  // beyond the trace: its last window
  // One window: fc.weight 2 of 4 pairs, fc.bias 1 of 4.
  DecisionSource one = two;
  one.windows = 1;
  CHECK(fit_tensor_rates(t, one).per_tensor == std::vector<std::vector<double>>{{0.5}, {0.25}});
  // One layer "fc": represented by its largest tensor, fc.weight.
  CHECK(r.representative == std::vector<int>{0});
  CHECK(r.tensor_at_depth(0.9) == 0);
}

TEST_CASE("surrogate rates: each layer represented by its largest tensor, and a trace with nothing past its initial passes refused") {
  const auto t = TrainingTrace::read(quiet_trace({{"a.weight", 5}, {"a.bias", 50}, {"b.weight", 3}, {"c", 4}}, 3, 2), "");
  DecisionSource source;
  source.path = PARAMS;
  source.trace_file = "q.json";
  const TensorRates r = fit_tensor_rates(t, source);
  CHECK(r.representative == std::vector<int>{1, 2, 3});  // a: a.bias (50 > 5), b: b.weight, c: c
  // Depth d in [0, 1) picks layer floor(3 d).
  CHECK(r.tensor_at_depth(0.0) == 1);
  CHECK(r.tensor_at_depth(0.33) == 1);
  CHECK(r.tensor_at_depth(0.34) == 2);
  CHECK(r.tensor_at_depth(0.99) == 3);
  for (int i = 0; i < 4; ++i) CHECK(r.rate(i, 2) == 0);  // nothing sent after the initial pass
  const auto short_trace = TrainingTrace::read(quiet_trace({{"w", 2}}, 1, 3), "");
  CHECK_THROWS_WITH_AS(fit_tensor_rates(short_trace, source),
                       "/training/sync/params/trace: training trace \"q.json\" has only its 2 initial passes (1 "
                       "iterations): nothing to fit a surrogate to",
                       ConfigError);
}
