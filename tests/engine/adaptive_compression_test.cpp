// Adaptive compression in the trace replay (seed 002): the explored candidates' iteration times
// equal AR-Topk's closed forms, the choice is the objective's argmin derived here, a 10x
// bandwidth drop re-explores and moves the ratio smaller, a constant network never re-explores.
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr int N = 4, EXPLORE = 2;
constexpr double LAT = 1e-6, ALPHA = 2 * LAT, BW = 10e9 / 8, GRAD = 25e6, FWD = 10e-3, BWD = 20e-3;
constexpr double ENC = 1e-10, DEC = 2e-10;  // s per dense element
constexpr double GAIN_A = 1.6, GAIN_B = 0.2;
const std::vector<double> CANDIDATES{0.1, 0.033, 0.011, 0.004, 0.001};

json scenario(int iterations) {
  return json{
      {"name", "adaptive"},
      {"platform", {{"topology", "star"}, {"workers", N}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
      {"network", {{"fidelity", "flow"}, {"collective_granularity", "pipelined"}, {"collective_call_cost", "0s"}}},
      {"workload",
       {{"synthetic", {{"layers", 1}, {"forward_s", "10ms"}, {"backward_s", "20ms"}, {"grad_bytes", "25MB"}}},
        {"iterations", iterations}}},
      {"training",
       {{"sync", {{"name", "bsp"}}},
        {"collective", {{"name", "artopk_ring"}}},
        {"compressor", {{"name", "artopk"}}},
        {"compression_cost", {{"encode", {{"per_element_s", ENC}}}, {"decode", {{"per_element_s", DEC}}}}},
        {"adaptive_compression",
         {{"explore_iterations", EXPLORE},
          {"gain_model",
           {{"source", "test"}, {"checkpoints", json::array({{{"step", 0}, {"a", GAIN_A}, {"b", GAIN_B}}})}}}}},
        {"bucketing", {{"bucket_bytes", "25MB"}, {"overlap", false}}}}},
      {"output", {{"timeline", false}}}};
}

/// One iteration of candidate c on a star of bandwidth `bw`: compute, encode, AR-Topk over a
/// ring (seed 002: alpha [2(N-1) + log N] + M_c beta [2(N-1)/N + log N]), decode.
double iteration_s(double c, double bw) {
  const double n = GRAD / 4, mc = 4 * std::ceil(c * n - 1e-9), L = std::log2(N);
  const double ring = ALPHA * (2 * (N - 1) + L) + mc / bw * (2.0 * (N - 1) / N + L);
  return FWD + BWD + ENC * n + ring + DEC * n;
}

/// The objective's argmin (models/adaptive_compression.hpp), from its definition.
double expected_choice(double bw) {
  double best = 0, best_score = 1e300;
  for (double c : CANDIDATES) {
    const double e_par = (FWD + BWD) / iteration_s(c, bw);
    const double gain = std::min(1.0, GAIN_A * std::pow(c, GAIN_B));
    const double score = std::max((1 - e_par) / 0.6, (1 - gain) / 0.4);
    if (score < best_score * (1 - 1e-12)) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

json run(const TempDir& tmp, const std::string& name, const json& s) {
  const auto file = tmp.write(name + ".json", s.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
}

/// iterations.csv of worker 0: (cr, collective, exploring) per iteration.
std::vector<std::tuple<double, std::string, int>> worker0(const TempDir& tmp, const std::string& name) {
  const auto csv = ddlsim::test::Csv::read(tmp.path() / name / "iterations.csv");
  const std::string line = csv.header_line();
  CHECK(line.substr(line.size() - 39) == "encode_decode_s,cr,collective,exploring");
  std::vector<std::tuple<double, std::string, int>> out;
  for (std::size_t i = 0; i < csv.size(); ++i)
    if (csv.at(i, "worker") == "0")
      out.emplace_back(csv.number(i, "cr"), csv.at(i, "collective"), csv.integer(i, "exploring"));
  return out;
}

}  // namespace

TEST_CASE("adaptive compression: explored times are the closed forms, and a constant network never re-explores") {
  TempDir tmp;
  const int iterations = 40;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json s = scenario(iterations);
    s["network"]["fidelity"] = fidelity;
    const auto sum = run(tmp, fidelity, s);
    const auto& a = sum["adaptive_compression"];
    REQUIRE(a["explorations"].size() == 1);
    const auto& e = a["explorations"][0];
    CHECK(e["reason"] == "start");
    CHECK(e["start_iteration"] == 0);
    CHECK(e["choice_iteration"] == 5 * EXPLORE);
    CHECK(e["probe"]["alpha_s"].get<double>() == doctest::Approx(ALPHA).epsilon(1e-12));
    CHECK(e["probe"]["bandwidth_Bps"].get<double>() == doctest::Approx(BW).epsilon(1e-12));
    for (std::size_t k = 0; k < CANDIDATES.size(); ++k) {
      const auto& o = e["candidates"][k];
      CHECK(o["ratio"].get<double>() == CANDIDATES[k]);
      CHECK(o["iteration_time_s"].get<double>() == doctest::Approx(iteration_s(CANDIDATES[k], BW)).epsilon(1e-9));
      CHECK(o["encode_decode_s"].get<double>() == doctest::Approx((ENC + DEC) * GRAD / 4).epsilon(1e-9));
    }
    CHECK(e["chosen_ratio"].get<double>() == expected_choice(BW));
    CHECK(a["exploration_iterations"] == 5 * EXPLORE);
    const auto rows = worker0(tmp, fidelity);
    REQUIRE(rows.size() == static_cast<std::size_t>(iterations));
    for (int it = 0; it < iterations; ++it) {
      const auto& [cr, collective, exploring] = rows[static_cast<std::size_t>(it)];
      CHECK(collective == "artopk_ring");
      CHECK(exploring == (it < 5 * EXPLORE ? 1 : 0));
      const double want = it < 5 * EXPLORE ? CANDIDATES[static_cast<std::size_t>(it / EXPLORE)] : expected_choice(BW);
      CHECK(cr == doctest::Approx(std::ceil(want * GRAD / 4 - 1e-9) / (GRAD / 4)).epsilon(1e-5));
    }
    // Progress excludes the explored iterations (the seed restores its checkpoint after them).
    CHECK(a["progress_throughput_samples_per_s"].get<double>() ==
          doctest::Approx(sum["throughput_samples_per_s"].get<double>() * (iterations - 5 * EXPLORE) / iterations));
  }
}

TEST_CASE("adaptive compression: the bytes workers send follow each iteration's ratio at every fidelity") {
  // Five ratios explored, then the choice: every byte a worker sends crosses its star link once,
  // so the bytes sent per iteration are links.csv's worker links over the iterations; and both
  // fidelities run the same ratios, so they send the same bytes. (Analytic fidelity once counted
  // every iteration at the first one's ratio: 45 % too few bytes on the bundled adaptive scenario.)
  TempDir tmp;
  const int iterations = 14;
  std::vector<double> per_iteration;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json s = scenario(iterations);
    s["network"]["fidelity"] = fidelity;
    const std::string name = std::string("bytes-") + fidelity;
    const auto sum = run(tmp, name, s);
    const auto links = ddlsim::test::Csv::read(tmp.path() / name / "links.csv");
    double uplinks = 0;
    for (std::size_t i = 0; i < links.size(); ++i)
      if (links.at(i, "link").rfind("worker-", 0) == 0) uplinks += links.number(i, "bytes");
    const double bytes = sum["comm_bytes_per_iteration"].get<double>();
    CHECK(bytes == doctest::Approx(uplinks / iterations).epsilon(1e-9));
    per_iteration.push_back(bytes);
  }
  CHECK(per_iteration[1] == doctest::Approx(per_iteration[0]).epsilon(1e-9));
}

TEST_CASE("adaptive compression: a 10x bandwidth drop re-explores and moves the ratio smaller") {
  TempDir tmp;
  json s = scenario(40);
  // The drop comes after the first exploration (10 iterations of at most 0.04 s) has chosen.
  s["network"]["link_traces"] = json::array({{{"bandwidth", json::array({json::array({0, "10Gbps"}),
                                                                          json::array({0.6, "1Gbps"})})}}});
  const auto a = run(tmp, "drop", s)["adaptive_compression"];
  REQUIRE(a["explorations"].size() == 2);
  const auto& first = a["explorations"][0];
  const auto& again = a["explorations"][1];
  CHECK(again["reason"] == "bandwidth");
  CHECK(again["probe"]["bandwidth_Bps"].get<double>() == doctest::Approx(BW / 10).epsilon(1e-12));
  CHECK(first["chosen_ratio"].get<double>() == expected_choice(BW));
  CHECK(again["chosen_ratio"].get<double>() == expected_choice(BW / 10));
  CHECK(again["chosen_ratio"].get<double>() < first["chosen_ratio"].get<double>());
  for (std::size_t k = 0; k < CANDIDATES.size(); ++k)
    CHECK(again["candidates"][k]["iteration_time_s"].get<double>() ==
          doctest::Approx(iteration_s(CANDIDATES[k], BW / 10)).epsilon(1e-9));
  const auto rows = worker0(tmp, "drop");
  const int choice = again["choice_iteration"].get<int>();
  REQUIRE(choice < 40);
  CHECK(std::get<0>(rows.back()) == doctest::Approx(expected_choice(BW / 10)).epsilon(1e-5));
  CHECK(std::get<2>(rows[static_cast<std::size_t>(choice)]) == 0);
}

TEST_CASE("adaptive compression: what it cannot adapt is refused, naming the JSON path") {
  TempDir tmp;
  auto refused = [&tmp](const json& s) {
    auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("s.json", s.dump())));
    CHECK(r.exit_code == 2);
    return r.err;
  };
  json fp16 = scenario(40);
  fp16["training"]["compressor"] = {{"name", "fp16"}};
  fp16["training"]["collective"] = {{"name", "ring"}};
  CHECK(refused(fp16).find("/training/adaptive_compression: adaptive compression chooses the compressor's \"ratio\"; "
                           "compressor \"fp16\" has no ratio: use one of artopk, dgc, lwtopk, mstopk, randomk, topk") !=
        std::string::npos);
  json ratio = scenario(40);
  ratio["training"]["compressor"]["params"] = {{"ratio", 0.01}};
  CHECK(refused(ratio).find("/training/compressor/params/ratio: adaptive compression chooses the ratio among its "
                            "candidate_ratios: remove it here") != std::string::npos);
  CHECK(refused(scenario(10)).find("/workload/iterations: adaptive compression explores 5 candidate ratios for 2 "
                                   "iterations each before it chooses: run more than 10 iterations") != std::string::npos);
  json up = scenario(40);
  up["training"]["adaptive_compression"]["candidate_ratios"] = json::array({0.01, 0.1});
  CHECK(refused(up).find("/training/adaptive_compression/candidate_ratios/1: candidate ratios must decrease") !=
        std::string::npos);
  json asp = scenario(40);
  asp["training"]["sync"] = {{"name", "asp"}};
  asp["training"].erase("collective");
  asp["platform"]["parameter_servers"] = 1;
  asp["training"]["compressor"]["name"] = "topk";
  CHECK(refused(asp).find("/training/adaptive_compression: adaptive compression explores and chooses in step across "
                          "the workers: only with \"bsp\" and \"aggregation\": \"allreduce\", not sync model \"asp\"") !=
        std::string::npos);
  json none = scenario(40);
  none["training"]["adaptive_compression"].erase("gain_model");
  CHECK(refused(none).find("/training/adaptive_compression/gain_model: adaptive compression needs a gain model") !=
        std::string::npos);
}

TEST_CASE("auto re-decides per iteration under link traces: AR-Topk's pick follows the latency") {
  // N = 4, M_c = 10 kB (k = 2,500 of 250,000 elements at ratio 0.01). At 1 us per link the
  // seed's inequalities pick the ring (alpha/beta = 2.5 kB < 0.417 M_c); from 0.1 s on, at
  // 100 us per link (alpha/beta = 250 kB), the all-gather.
  TempDir tmp;
  json s = scenario(8);
  s["training"].erase("adaptive_compression");
  s["training"]["collective"] = {{"name", "auto"}};
  s["training"]["compressor"] = {{"name", "artopk"}, {"params", {{"ratio", 0.01}}}};
  s["workload"]["synthetic"]["grad_bytes"] = "1MB";
  s["network"]["link_traces"] = json::array({{{"latency", json::array({json::array({0, "1us"}), json::array({0.1, "100us"})})}}});
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(std::string(fidelity));
    s["network"]["fidelity"] = fidelity;
    (void)run(tmp, fidelity, s);
    const auto rows = worker0(tmp, fidelity);
    REQUIRE(rows.size() == 8);
    CHECK(std::get<1>(rows.front()) == "artopk_ring");
    CHECK(std::get<1>(rows.back()) == "allgather");
    for (const auto& r : rows) CHECK(std::get<0>(r) == doctest::Approx(0.01));
  }
}
