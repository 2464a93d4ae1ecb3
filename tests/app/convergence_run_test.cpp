// `ddlsim run` with training.convergence: convergence.csv and summary.json's "convergence" against
// the run's own iterations.csv, determinism, every fidelity, and the refusals.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::bad_input;
using ddlsim::test::Csv;
using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

/// 4 workers train softmax regression (7,850 parameters: 31,400 bytes) on 2,000 Fashion-MNIST samples.
json scenario() {
  return json::parse(R"({
    "name": "convergence_test",
    "platform": {"topology": "star", "workers": 4, "link": {"bandwidth": "100Mbps", "latency": "1ms"}},
    "workload": {"synthetic": {"layers": 1, "forward_s": "0.5ms", "backward_s": "0.3ms", "grad_bytes": 31400},
                 "batch_size": 16, "iterations": 30},
    "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"},
                 "convergence": {"dataset": "fashion_mnist", "train_samples": 2000, "test_samples": 500,
                                 "learning_rate": 0.2, "target_accuracy": 0.6, "evaluate_every_iterations": 5}},
    "output": {"timeline": false}
  })");
}

struct Run {
  Csv convergence, iterations;
  json summary;
  std::string csv_text;
};

Run run(const json& doc, const std::string& extra = "") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", doc.dump());
  const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} -q {}", file, tmp.file("out"), extra));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  Run out;
  out.csv_text = ddlsim::test::slurp(tmp.path() / "out" / "convergence.csv");
  out.convergence = Csv::parse(out.csv_text);
  out.iterations = Csv::read(tmp.path() / "out" / "iterations.csv");
  out.summary = json::parse(ddlsim::test::slurp(tmp.path() / "out" / "summary.json"));
  return out;
}

/// When iteration k's last worker ended it, from iterations.csv.
double last_end(const Csv& it, int k) {
  double end = 0;
  for (std::size_t r = 0; r < it.size(); ++r)
    if (it.integer(r, "iteration") == k) end = std::max(end, it.number(r, "end_s"));
  return end;
}

}  // namespace

TEST_CASE("bsp co-simulation: evaluations at the iterations' ends and the first at the target is the time to target") {
  const Run r = run(scenario());
  const Csv& c = r.convergence;
  REQUIRE(c.size() == 6);  // after iterations 4, 9, ..., 29
  for (std::size_t i = 0; i < c.size(); ++i) {
    const int k = c.integer(i, "iteration");
    CHECK(k == 5 * static_cast<int>(i) + 4);
    CHECK(c.number(i, "time_s") == doctest::Approx(last_end(r.iterations, k)).epsilon(1e-9));
    CHECK(c.number(i, "epochs") == doctest::Approx((k + 1) * 4.0 * 16 / 2000).epsilon(1e-6));
  }
  CHECK(c.number(c.size() - 1, "test_loss") < c.number(0, "test_loss"));
  const json& s = r.summary.at("convergence");
  CHECK(s.at("basis") == "co-simulated");
  CHECK(s.at("parameters") == 7850);
  CHECK(s.at("evaluations") == 6);
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < c.size() && !first; ++i)
    if (c.number(i, "test_accuracy") >= 0.6) first = i;
  REQUIRE(first.has_value());  // 60 % on 10 classes is reached within 30 steps of 64 samples
  CHECK(s.at("reached_target") == true);
  CHECK(s.at("time_to_target_s").get<double>() == doctest::Approx(c.number(*first, "time_s")).epsilon(1e-9));
  CHECK(s.at("iterations_to_target") == c.integer(*first, "iteration") + 1);
  CHECK(s.at("final").at("test_accuracy").get<double>() == doctest::Approx(c.number(c.size() - 1, "test_accuracy")).epsilon(1e-6));
}

TEST_CASE("co-simulation gives the same bytes twice and the same numerics at every fidelity at its times") {
  const Run a = run(scenario()), b = run(scenario());
  CHECK(a.csv_text == b.csv_text);
  const Run analytic = run(scenario(), "--set network.fidelity=analytic");
  REQUIRE(analytic.convergence.size() == a.convergence.size());
  for (std::size_t i = 0; i < a.convergence.size(); ++i) {
    CHECK(analytic.convergence.at(i, "test_accuracy") == a.convergence.at(i, "test_accuracy"));
    CHECK(analytic.convergence.number(i, "time_s") ==
          doctest::Approx(last_end(analytic.iterations, analytic.convergence.integer(i, "iteration"))).epsilon(1e-9));
  }
  json other = scenario();
  other["seed"] = 2;
  CHECK(run(other).csv_text != a.csv_text);
}

TEST_CASE("local SGD co-simulation: evaluated only where the copies were averaged") {
  json doc = scenario();
  doc["training"]["sync"] = json::parse(R"({"name": "local_sgd", "params": {"period_iterations": 4}})");
  doc["training"]["convergence"]["evaluate_every_iterations"] = 1;
  const Run r = run(doc);
  REQUIRE(r.convergence.size() == 7);  // after iterations 3, 7, ..., 27; the last (29) is not averaged
  for (std::size_t i = 0; i < r.convergence.size(); ++i) CHECK(r.convergence.integer(i, "iteration") == 4 * static_cast<int>(i) + 3);
}

TEST_CASE("training.convergence refusals name the path and what is valid") {
  TempDir tmp;
  auto refused = [&tmp](const json& doc) {
    const std::string file = tmp.write("s.json", doc.dump());
    const std::string err = bad_input(fmt::format("run {} --out {}", file, tmp.file("out")), file);
    CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
    return err;
  };
  json doc = scenario();
  doc["training"]["sync"] = json::parse(R"({"name": "crossbow"})");
  CHECK(refused(doc) == "ddlsim: error: /training/convergence: training is co-simulated with the sync models bsp, "
                        "local_sgd, asp, ssp, gossip, event_triggered, selective_sync, ordered_gradients; \"crossbow\" is "
                        "not co-simulated (leave training.convergence out to simulate its time only)\n");
  doc = scenario();
  doc["training"]["sync"] = json::parse(R"({"name": "selective_sync", "params": {"decisions": "live"}})");
  CHECK(refused(doc) == "ddlsim: error: /training/sync/params/delta: \"decisions\": \"live\" needs the relative "
                        "gradient change that flags an iteration (e.g. 0.3)\n");
  doc = scenario();
  doc["training"].erase("collective");
  doc["training"]["sync"] = {{"name", "event_triggered"},
                             {"params", {{"decisions", "surrogate"},
                                         {"trace", std::string(DDLSIM_SOURCE_DIR) +
                                                       "/scenarios/traces/eventgrad_cnn_event_adaptive_4w.json"}}}};
  CHECK(refused(doc) == "ddlsim: error: /training/sync/params/decisions: event_triggered with training.convergence "
                        "decides from the trained model's own norms: set \"decisions\": \"live\" (got \"surrogate\", "
                        "whose decisions would not be the co-simulated training's)\n");
  doc["training"]["sync"]["params"] = {{"decisions", "live"}, {"trace", "t.json"}};
  CHECK(refused(doc) == "ddlsim: error: /training/sync/params/trace: not with \"decisions\": \"live\" (the decisions "
                        "come from the co-simulated training's own parameter norms, docs/convergence.md)\n");
  doc["training"]["sync"]["params"] = {{"decisions", "live"}, {"threshold", "constant"}};
  CHECK(refused(doc) == "ddlsim: error: /training/sync/params/value: a constant threshold needs its value (norm units, "
                        "e.g. 0.01)\n");
  doc["training"]["sync"]["params"] = {{"decisions", "live"}};
  doc["training"].erase("convergence");
  CHECK(refused(doc) == "ddlsim: error: /training/sync/params/decisions: \"live\" decides from a co-simulated "
                        "training's own numerics: add training.convergence (docs/convergence.md), or use \"trace\" or "
                        "\"surrogate\"\n");
  doc = scenario();
  doc["workload"]["synthetic"]["grad_bytes"] = 40000;
  CHECK(refused(doc) == "ddlsim: error: /workload/synthetic/grad_bytes: the workload's gradients are 40000 bytes, but "
                        "the co-simulated softmax 784-10 (7850 parameters) has 31400 bytes (7850 parameters in fp32): "
                        "profile the model that is trained (docs/convergence.md, \"Workload\")\n");
  doc = scenario();
  doc["training"]["convergence"]["train_samples"] = 3;
  CHECK(refused(doc) == "ddlsim: error: /training/convergence/train_samples: 3 training samples cannot be dealt to 4 "
                        "workers (4 shards of at least one sample)\n");
  doc = scenario();
  doc["training"]["convergence"]["dataset"] = "cifar";
  CHECK(refused(doc) == "ddlsim: error: /training/convergence/dataset: unknown value \"cifar\"; valid values are: "
                        "fashion_mnist, digits\n");
  doc = scenario();
  doc["training"]["convergence"] = nullptr;
  CHECK(refused(doc) == "ddlsim: error: /training/convergence: expected an object, got null (leave it out for no "
                        "co-simulation)\n");
  doc = scenario();
  doc["training"]["sync"] = json::parse(R"({"name": "local_sgd"})");
  doc["training"]["convergence"]["noise_scale"] = true;
  CHECK(refused(doc) == "ddlsim: error: /training/convergence/noise_scale: only with bsp, no compressor and at least 2 "
                        "workers: the noise scale is measured from the workers' gradients of one dense step and their "
                        "mean (got sync model \"local_sgd\", compressor \"none\", 4 workers)\n");
  doc = scenario();
  doc["training"]["convergence"]["hidden_units"] = 8;
  CHECK(refused(doc) == "ddlsim: error: /training/convergence/hidden_units: only with \"model\": \"mlp\" (softmax "
                        "regression has no hidden layer)\n");
}

TEST_CASE("asp co-simulation: one worker on one server is plain SGD and trains like bsp on one worker") {
  json bsp = scenario();
  bsp["platform"]["workers"] = 1;
  json asp = bsp;
  asp["platform"]["parameter_servers"] = 1;
  asp["training"]["sync"] = json::parse(R"({"name": "asp"})");
  asp["training"].erase("collective");
  const Run a = run(asp), b = run(bsp);
  REQUIRE(a.convergence.size() == b.convergence.size());
  for (std::size_t i = 0; i < a.convergence.size(); ++i) {
    CHECK(a.convergence.at(i, "test_accuracy") == b.convergence.at(i, "test_accuracy"));
    CHECK(a.convergence.at(i, "test_loss") == b.convergence.at(i, "test_loss"));
    CHECK(a.convergence.number(i, "time_s") ==
          doctest::Approx(last_end(a.iterations, a.convergence.integer(i, "iteration"))).epsilon(1e-9));
  }
}

TEST_CASE("asp and ssp co-simulation on four workers and two servers train and take their times from the run") {
  for (const char* sync : {R"({"name": "asp"})", R"({"name": "ssp", "params": {"staleness_bound": 1}})"}) {
    CAPTURE(sync);
    json doc = scenario();
    doc["platform"]["parameter_servers"] = 2;
    doc["training"]["sync"] = json::parse(sync);
    doc["training"].erase("collective");
    doc["training"]["convergence"]["learning_rate"] = 0.05;
    const Run r = run(doc);
    REQUIRE(r.convergence.size() == 6);
    CHECK(r.convergence.number(5, "test_loss") < r.convergence.number(0, "test_loss"));
    CHECK(r.convergence.number(5, "epochs") == doctest::Approx(30 * 4 * 16 / 2000.0).epsilon(1e-9));  // every gradient applied
    for (std::size_t i = 0; i < r.convergence.size(); ++i)
      CHECK(r.convergence.number(i, "time_s") ==
            doctest::Approx(last_end(r.iterations, r.convergence.integer(i, "iteration"))).epsilon(1e-9));
    const Run again = run(doc);
    CHECK(again.csv_text == r.csv_text);
  }
}

TEST_CASE("a relaxed model's statistical efficiency is bsp's samples to the target over its own") {
  json local = scenario();
  local["training"]["sync"] = json::parse(R"({"name": "local_sgd", "params": {"period_iterations": 2}})");
  local["training"]["convergence"]["evaluate_every_iterations"] = 2;
  json bsp = scenario();
  bsp["training"]["convergence"]["evaluate_every_iterations"] = 2;
  const Run l = run(local), b = run(bsp);
  const json& s = l.summary.at("convergence");
  const json& base = b.summary.at("convergence");
  REQUIRE(s.at("reached_target") == true);
  REQUIRE(base.at("reached_target") == true);
  CHECK(b.summary.at("convergence").count("statistical_efficiency") == 0);  // bsp has no baseline but itself
  const json& e = s.at("statistical_efficiency");
  CHECK(e.at("bsp_iterations_to_target") == base.at("iterations_to_target"));
  CHECK(e.at("bsp_epochs_to_target").get<double>() == doctest::Approx(base.at("epochs_to_target").get<double>()));
  CHECK(e.at("relative_to_bsp").get<double>() ==
        doctest::Approx(base.at("epochs_to_target").get<double>() / s.at("epochs_to_target").get<double>()));
  local["training"]["convergence"]["bsp_baseline"] = false;
  CHECK(run(local).summary.at("convergence").count("statistical_efficiency") == 0);
}

TEST_CASE("topk co-simulated with bsp: at ratio 1 it trains as dense bsp and its statistical efficiency is 1") {
  json doc = scenario();
  doc["training"]["compressor"] = json::parse(R"({"name": "topk", "params": {"ratio": 1}})");
  doc["training"]["collective"] = json::parse(R"({"name": "ring_allgather"})");
  doc["training"]["compression_cost"] = json::parse(R"({"encode": {"fixed_s": 0}, "decode": {"fixed_s": 0}})");
  const Run sparse = run(doc), dense = run(scenario());
  REQUIRE(sparse.convergence.size() == dense.convergence.size());
  for (std::size_t i = 0; i < dense.convergence.size(); ++i)
    CHECK(sparse.convergence.at(i, "test_accuracy") == dense.convergence.at(i, "test_accuracy"));
  const json& e = sparse.summary.at("convergence").at("statistical_efficiency");
  CHECK(e.at("relative_to_bsp").get<double>() == doctest::Approx(1.0).epsilon(1e-12));
  doc["training"]["compressor"]["params"]["ratio"] = 0.01;
  CHECK(run(doc).csv_text != sparse.csv_text);
}

TEST_CASE("lwtopk and dgc at ratio 1 train as dense bsp and every sparsifier trains its own way at 0.05") {
  const Run dense = run(scenario());
  for (const char* name : {"lwtopk", "mstopk", "dgc", "threshold"}) {
    CAPTURE(name);
    json doc = scenario();
    const std::string key = std::string(name) == "threshold" ? "density" : "ratio";
    doc["training"]["compressor"] = {{"name", name}, {"params", {{key, 1}}}};
    doc["training"]["collective"] = json::parse(R"({"name": "ring_allgather"})");
    doc["training"]["compression_cost"] = json::parse(R"({"encode": {"fixed_s": 0}, "decode": {"fixed_s": 0}})");
    const Run full = run(doc);
    REQUIRE(full.convergence.size() == dense.convergence.size());
    const std::string n = name;
    if (n == "lwtopk" || n == "dgc")
      for (std::size_t i = 0; i < dense.convergence.size(); ++i)
        CHECK(full.convergence.at(i, "test_accuracy") == dense.convergence.at(i, "test_accuracy"));
    doc["training"]["compressor"]["params"][key] = 0.05;
    const Run sparse = run(doc);
    CHECK(sparse.csv_text != dense.csv_text);
    CHECK(sparse.csv_text == run(doc).csv_text);  // seeded: the same bytes again
    // Trains: the last evaluation beats the untrained model's 10 % by far.
    CHECK(sparse.convergence.number(sparse.convergence.size() - 1, "test_accuracy") > 0.4);
  }
}

TEST_CASE("gossip co-simulation on a ring of three trains exactly as bsp: each worker mixes with all the others") {
  json ring = scenario();
  ring["platform"]["workers"] = 3;
  ring["training"].erase("collective");
  ring["training"]["sync"] = json::parse(R"({"name": "gossip", "params": {"graph": "ring", "distinct_neighbours": true}})");
  json bsp = scenario();
  bsp["platform"]["workers"] = 3;
  const Run g = run(ring), b = run(bsp);
  REQUIRE(g.convergence.size() == b.convergence.size());
  for (std::size_t i = 0; i < b.convergence.size(); ++i) {
    CHECK(g.convergence.at(i, "test_loss") == b.convergence.at(i, "test_loss"));
    CHECK(g.convergence.at(i, "test_accuracy") == b.convergence.at(i, "test_accuracy"));
    CHECK(g.convergence.number(i, "time_s") == doctest::Approx(last_end(g.iterations, g.convergence.integer(i, "iteration"))).epsilon(1e-9));
  }
  CHECK(g.summary.at("convergence").at("statistical_efficiency").at("relative_to_bsp").get<double>() ==
        doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("gossip co-simulation: a ring of four mixes less than bsp and asynchronous gossip trains on what arrived") {
  json doc = scenario();
  doc["training"].erase("collective");
  doc["training"]["sync"] = json::parse(R"({"name": "gossip"})");
  const Run sync = run(doc), again = run(doc), bsp = run(scenario());
  CHECK(sync.csv_text == again.csv_text);
  CHECK(sync.csv_text != bsp.csv_text);
  doc["training"]["sync"]["params"] = {{"variant", "asynchronous"}};
  const Run async = run(doc);
  CHECK(async.csv_text != sync.csv_text);
  REQUIRE(async.convergence.size() == 6);
  for (std::size_t i = 0; i < async.convergence.size(); ++i)
    CHECK(async.convergence.number(i, "time_s") ==
          doctest::Approx(last_end(async.iterations, async.convergence.integer(i, "iteration"))).epsilon(1e-9));
  CHECK(async.convergence.number(5, "test_loss") < async.convergence.number(0, "test_loss"));
}

TEST_CASE("event_triggered with live decisions: threshold 0 sends every tensor and an adaptive threshold saves messages") {
  json doc = scenario();
  doc["training"].erase("collective");
  doc["training"]["sync"] = json::parse(R"({"name": "event_triggered", "params": {"decisions": "live",
                                            "threshold": "constant", "value": 0}})");
  const Run every = run(doc);
  const json& e = every.summary.at("events");
  CHECK(e.at("sent") == 4 * 30 * 2 * 2);  // 4 workers, 30 iterations, 2 tensors (weight, bias), 2 neighbours
  CHECK(e.at("saved") == 0);
  CHECK(e.at("bytes_sent_by_workers").get<double>() == doctest::Approx(4 * 30 * 2 * 31400.0));
  CHECK(e.at("decisions").at("source") == "live");
  doc["training"]["sync"]["params"] = {{"decisions", "live"}, {"initial_comm_passes", 5}};
  const Run adaptive = run(doc);
  const json& a = adaptive.summary.at("events");
  CHECK(a.at("saved").get<int>() > 0);
  CHECK(a.at("sent").get<int>() >= 4 * 4 * 2 * 2);  // passes 1 .. 4 always send
  CHECK(adaptive.csv_text != every.csv_text);
  CHECK(adaptive.summary.at("sync_settings").at("decisions") == "live");
}

TEST_CASE("selective_sync with live decisions: delta 0 synchronises every iteration and trains as bsp") {
  json doc = scenario();
  doc["training"]["sync"] = json::parse(R"({"name": "selective_sync", "params": {"decisions": "live", "delta": 0}})");
  const Run every = run(doc), bsp = run(scenario());
  REQUIRE(every.convergence.size() == bsp.convergence.size());
  for (std::size_t i = 0; i < bsp.convergence.size(); ++i) {
    CHECK(every.convergence.integer(i, "iteration") == bsp.convergence.integer(i, "iteration"));
    CHECK(every.convergence.number(i, "test_loss") == doctest::Approx(bsp.convergence.number(i, "test_loss")).epsilon(1e-6));
  }
  CHECK(every.summary.at("events").at("decisions").at("synchronised_fraction") == 1.0);
  CHECK(every.summary.at("sync_settings").at("decisions") == "live");
  // A large delta synchronises fewer iterations, and only those are evaluated.
  doc["training"]["sync"]["params"]["delta"] = 1;
  const Run fewer = run(doc);
  const double fraction = fewer.summary.at("events").at("decisions").at("synchronised_fraction").get<double>();
  CHECK(fraction < 1.0);
  CHECK(fraction > 0.0);
  CHECK(fewer.csv_text != every.csv_text);
  CHECK(run(doc).csv_text == fewer.csv_text);
}

TEST_CASE("ordered_gradients with live decisions: m = N trains as bsp and m = 1 applies one gradient per step") {
  json doc = scenario();
  doc["training"].erase("collective");
  doc["platform"]["parameter_servers"] = 1;
  doc["training"]["sync"] = json::parse(R"({"name": "ordered_gradients", "params": {"decisions": "live", "m": 4}})");
  const Run all = run(doc), bsp = run(scenario());
  REQUIRE(all.convergence.size() == bsp.convergence.size());
  for (std::size_t i = 0; i < bsp.convergence.size(); ++i)
    CHECK(all.convergence.number(i, "test_loss") == doctest::Approx(bsp.convergence.number(i, "test_loss")).epsilon(1e-6));
  CHECK(all.summary.at("events").at("sent") == 4 * 30);
  doc["training"]["sync"]["params"]["m"] = 1;
  const Run one = run(doc);
  CHECK(one.summary.at("events").at("sent") == 30);  // one worker's gradient per iteration
  CHECK(one.summary.at("events").at("decisions").at("source") == "live");
  CHECK(one.csv_text != all.csv_text);
  CHECK(one.convergence.number(one.convergence.size() - 1, "test_loss") < one.convergence.number(0, "test_loss"));
  doc["training"]["sync"]["params"].erase("m");
  TempDir tmp;
  const std::string file = tmp.write("s.json", doc.dump());
  CHECK(bad_input(fmt::format("run {} --out {}", file, tmp.file("out")), file) ==
        "ddlsim: error: /training/sync/params/m: missing required key (live decisions select m workers)\n");
}

TEST_CASE("adaptive compression with live gains: measured on the trained gradients and chosen by the objective") {
  json doc = scenario();
  doc["workload"]["iterations"] = 40;
  doc["training"]["compressor"] = json::parse(R"({"name": "topk"})");
  doc["training"]["collective"] = json::parse(R"({"name": "ring_allgather"})");
  doc["training"]["compression_cost"] = json::parse(R"({"encode": {"fixed_s": 0}, "decode": {"fixed_s": 0}})");
  doc["training"]["adaptive_compression"] = json::parse(R"({"candidate_ratios": [1, 0.1, 0.01], "explore_iterations": 6,
                                                            "gain_model": "live"})");
  const Run r = run(doc);
  const json& a = r.summary.at("adaptive_compression");
  CHECK(a.at("gain_model").at("live") == true);
  const json& first = a.at("explorations").at(0);
  REQUIRE(first.at("candidates").size() == 3);
  // Top-k at ratio 1 sends every element of g + residual (the residual stays zero): gain 1 exactly.
  CHECK(first.at("candidates").at(0).at("gain").get<double>() == 1.0);
  const double g1 = first.at("candidates").at(1).at("gain").get<double>();
  const double g2 = first.at("candidates").at(2).at("gain").get<double>();
  CHECK(g1 > 0);
  CHECK(g1 < 1);
  CHECK(g2 > 0);
  CHECK(g2 < g1);  // keeping a tenth as many keeps less of the gradient
  // The choice is the objective's argmin over what was measured (ties to the larger ratio).
  double best = 1e300, chosen = 0;
  for (const json& c : first.at("candidates")) {
    const double score = std::max((1 - c.at("parallel_efficiency").get<double>()) / 0.6, (1 - c.at("gain").get<double>()) / 0.4);
    CHECK(c.at("score").get<double>() == doctest::Approx(score).epsilon(1e-12));
    if (score < best * (1 - 1e-12)) {
      best = score;
      chosen = c.at("ratio").get<double>();
    }
  }
  CHECK(first.at("chosen_ratio").get<double>() == chosen);
  // Seed 002 explores from a checkpoint and restores it: no evaluation while exploring (iterations
  // 0 to 17), and with the choice forced to ratio 1 (top-k at 1 is dense) the training after the
  // exploration is dense bsp's from its start, 18 iterations later.
  for (std::size_t i = 0; i < r.convergence.size(); ++i) CHECK(r.convergence.integer(i, "iteration") >= 18);
  json forced = doc;
  forced["training"]["adaptive_compression"]["weights"] = json::parse(R"({"time": 1, "gain": 0.01})");
  const Run f = run(forced);
  CHECK(f.summary.at("adaptive_compression").at("explorations").at(0).at("chosen_ratio").get<double>() == 1.0);
  const Run dense = run(scenario());
  REQUIRE(f.convergence.size() >= 3);
  for (std::size_t i = 0; i + 1 < f.convergence.size(); ++i) {
    CHECK(f.convergence.integer(i, "iteration") == dense.convergence.integer(i, "iteration") + 18);
    CHECK(f.convergence.at(i, "test_accuracy") == dense.convergence.at(i, "test_accuracy"));
    CHECK(f.convergence.at(i, "epochs") == dense.convergence.at(i, "epochs"));
  }
  CHECK(r.csv_text == run(doc).csv_text);
  // At analytic fidelity (the ring's steps are uncontended on this star) the same gains are measured,
  // the same ratio chosen, and the same training lands at the same times.
  const Run analytic = run(doc, "--set network.fidelity=analytic");
  const json& b = analytic.summary.at("adaptive_compression").at("explorations").at(0);
  CHECK(b.at("chosen_ratio") == first.at("chosen_ratio"));
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(b.at("candidates").at(i).at("gain").get<double>() == first.at("candidates").at(i).at("gain").get<double>());
    CHECK(b.at("candidates").at(i).at("parallel_efficiency").get<double>() ==
          doctest::Approx(first.at("candidates").at(i).at("parallel_efficiency").get<double>()).epsilon(1e-9));
  }
  CHECK(analytic.csv_text == r.csv_text);
  CHECK(analytic.summary.at("convergence").at("time_to_target_s").get<double>() ==
        doctest::Approx(r.summary.at("convergence").at("time_to_target_s").get<double>()).epsilon(1e-9));
  // Refusals: a fitted gain model with the co-simulation, "live" without it.
  TempDir tmp;
  auto refused = [&tmp](const json& d) {
    const std::string file = tmp.write("s.json", d.dump());
    return bad_input(fmt::format("run {} --out {}", file, tmp.file("out")), file);
  };
  doc["training"]["adaptive_compression"]["gain_model"] = std::string(DDLSIM_SOURCE_DIR) + "/scenarios/compression_gain/digits_cnn_topk.json";
  CHECK(refused(doc) == "ddlsim: error: /training/adaptive_compression/gain_model: with training.convergence the gain "
                          "is measured on the trained model's own gradients: set \"gain_model\": \"live\" (a fitted gain "
                          "model is another training's)\n");
  doc["training"]["adaptive_compression"]["gain_model"] = "live";
  doc["training"].erase("convergence");
  CHECK(refused(doc) == "ddlsim: error: /training/adaptive_compression/gain_model: \"live\" measures the gain on a "
                          "co-simulated training's own gradients: add training.convergence (docs/convergence.md), or "
                          "give a gain model (e.g. compression_gain/digits_cnn_topk.json)\n");
}

TEST_CASE("training.stragglers.seed draws other compute noise over the same data order and training") {
  json doc = scenario();
  doc["training"]["stragglers"] = json::parse(R"({"distribution": "lognormal", "sigma": 0.3})");
  const Run base = run(doc);
  // The scenario's seed is the noise's by default: naming it changes nothing.
  json same = doc;
  same["training"]["stragglers"]["seed"] = 1;
  CHECK(run(same).csv_text == base.csv_text);
  // Another noise seed: other iteration times, the same bsp numerics (the shards and batches follow
  // the scenario's seed), so the same accuracies at the same iterations, at other times.
  json other = doc;
  other["training"]["stragglers"]["seed"] = 7;
  const Run o = run(other);
  REQUIRE(o.convergence.size() == base.convergence.size());
  bool any_time_differs = false;
  for (std::size_t i = 0; i < o.convergence.size(); ++i) {
    CHECK(o.convergence.integer(i, "iteration") == base.convergence.integer(i, "iteration"));
    CHECK(o.convergence.at(i, "test_accuracy") == base.convergence.at(i, "test_accuracy"));
    CHECK(o.convergence.number(i, "time_s") ==
          doctest::Approx(last_end(o.iterations, o.convergence.integer(i, "iteration"))).epsilon(1e-9));
    any_time_differs = any_time_differs || o.convergence.at(i, "time_s") != base.convergence.at(i, "time_s");
  }
  CHECK(any_time_differs);
  TempDir tmp;
  json bad = scenario();
  bad["training"]["stragglers"] = json::parse(R"({"seed": 3})");
  const std::string file = tmp.write("s.json", bad.dump());
  CHECK(bad_input(fmt::format("run {} --out {}", file, tmp.file("out")), file) ==
        "ddlsim: error: /training/stragglers/seed: only valid with a noise \"distribution\" (normal, lognormal, "
        "exponential): it seeds the noise alone\n");
}
