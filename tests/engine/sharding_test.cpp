// Sharded data parallelism end to end (training.sharding): every strategy's iteration time derived
// here by hand from the ring all-gather's and reduce-scatter's closed form on an uncontended star,
// at analytic and flow fidelity, to 1e-6; the two engines agree under a slow worker and a link trace;
// the bytes each rank sends (ZeRO-3: 1.5 x DDP); the memory per rank in summary.json and its refusal
// over device_memory; every combination it refuses, with its message.
//
// Platform: 4 workers on a star of 10 Gbps, 5 us links: alpha = 2 x 5 us, beta = 8 / 10e9 s/B, the
// call cost 10 us (= alpha, the default). A ring all-gather or reduce-scatter of M bytes among 4:
//     c(M) = call + 3 alpha + 3/4 M beta.
// Workload: 8 layers of 1 ms forward, 2 ms backward and 4 MB of gradients (1 M fp32 parameters),
// optimizer 4 ms, I/O 1 ms; 4 units of 2 layers: F = 2 ms, B = 4 ms and M = 8 MB per unit.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr int N = 4;
constexpr double ALPHA = 2 * 5e-6;
constexpr double CALL = 10e-6;
constexpr double IO = 1e-3, F = 2e-3, B = 4e-3, OPT = 4e-3;  // F, B: per unit of 2 layers
constexpr double UNIT = 8e6;

double ring_pass(double bytes, double beta) { return CALL + (N - 1) * ALPHA + (N - 1.0) / N * bytes * beta; }

json sharded_scenario(const json& sharding, const std::string& fidelity, const std::string& bandwidth = "10Gbps") {
  return json{{"name", "sharded"},
              {"platform", {{"topology", "star"}, {"workers", N}, {"link", {{"bandwidth", bandwidth}, {"latency", "5us"}}}}},
              {"network", {{"fidelity", fidelity}, {"model", "ideal"}}},
              {"workload", {{"synthetic", {{"layers", 8}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", "4MB"},
                                           {"optimizer_s", "4ms"}, {"io_s", "1ms"}}},
                            {"iterations", 3}}},
              {"training", {{"sync", {{"name", "bsp"}}}, {"sharding", sharding}}},
              {"output", {{"timeline", false}}}};
}

json sharded_summary(const TempDir& tmp, const std::string& name, const json& s) {
  const std::string file = tmp.write(name + ".json", s.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
}

std::string sharded_refusal(const TempDir& tmp, const json& s) {
  auto r = ddlsim::test::ddlsim("validate " + tmp.write("bad.json", s.dump()));
  CHECK(r.exit_code == 2);
  return r.err;
}

double median_s(const json& s) { return s["iteration_time_median_s"].get<double>(); }

}  // namespace

TEST_CASE("fsdp_full_shard on a slow network: each backward prefetch's timeline derived") {
  // c = c(8 MB) = 4.84 ms > F and B: the stream never waits for compute once it has work.
  // Forward: gather(0) from IO; each next gather starts as the previous ends (issued when forward(u)
  // starts), so forward(3) starts at IO + 4c and ends at IO + 4c + F; backward's gather(3) ends at
  // t0 = IO + 5c + F. PRE: gather(2), reduce-scatter(3), gather(1), ... run back to back: 7 more c.
  // POST: gather(u-1) waits for backward(u): the first one B later, the rest still back to back.
  // NONE: each gather(u-1) queues behind reduce-scatter(u), issued after backward(u): 4 B exposed.
  const double c = ring_pass(UNIT, 8 / 10e9);
  const double t0 = IO + 5 * c + F;
  TempDir tmp;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    const std::vector<std::pair<std::string, double>> cases = {
        {"pre", t0 + 7 * c}, {"post", t0 + B + 7 * c}, {"none", t0 + 4 * B + 7 * c}};
    for (const auto& [prefetch, comm_end] : cases) {
      CAPTURE(prefetch);
      const auto s = sharded_summary(
          tmp, fidelity + prefetch,
          sharded_scenario({{"strategy", "fsdp_full_shard"}, {"units", 4}, {"backward_prefetch", prefetch}}, fidelity));
      CHECK(median_s(s) == doctest::Approx(comm_end + OPT / N).epsilon(1e-6));
      CHECK(s["buckets_per_iteration"] == 12);  // 4 forward gathers, 4 backward gathers, 4 reduce-scatters
      CHECK(s["collective"] == "ring_allgather+ring_reduce_scatter");
      CHECK(s["sharding"]["backward_prefetch"] == prefetch);
    }
    // zero3 is the same schedule.
    const auto z3 = sharded_summary(tmp, fidelity + "z3", sharded_scenario({{"strategy", "zero3"}, {"units", 4}}, fidelity));
    CHECK(median_s(z3) == doctest::Approx(t0 + 7 * c + OPT / N).epsilon(1e-6));
  }
}

TEST_CASE("fsdp_full_shard on a fast network: prefetch hides every gather but the first of each pass") {
  // c(8 MB) at 100 Gbps = 0.52 ms, and 2c < B: forward(u) hides gather(u+1); backward(u) hides
  // gather(u-1), queued behind reduce-scatter(u+1). Exposed: gather(0), backward's gather(3) and the
  // last reduce-scatter: T = IO + c + 4F + c + 4B + c + OPT/N.
  const double c = ring_pass(UNIT, 8 / 100e9);
  TempDir tmp;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    const auto s = sharded_summary(tmp, "fast" + fidelity,
                                   sharded_scenario({{"strategy", "fsdp_full_shard"}, {"units", 4}}, fidelity, "100Gbps"));
    CHECK(median_s(s) == doctest::Approx(IO + 3 * c + 4 * F + 4 * B + OPT / N).epsilon(1e-6));
    CHECK(s["exposed_comm_time_per_iteration_s"].get<double>() == doctest::Approx(3 * c).epsilon(1e-6));
  }
}

TEST_CASE("fsdp_shard_grad_op gathers in forward only and zero2 reduce-scatters buckets then gathers after the step") {
  const double c = ring_pass(UNIT, 8 / 10e9);
  TempDir tmp;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    // SHARD_GRAD_OP: forward as FULL_SHARD (ends IO + 4c + F); reduce-scatter(3) issued B later, the
    // rest queue behind it (c > B): 4c more.
    const auto sgo = sharded_summary(tmp, "sgo" + fidelity,
                                     sharded_scenario({{"strategy", "fsdp_shard_grad_op"}, {"units", 4}}, fidelity));
    CHECK(median_s(sgo) == doctest::Approx(IO + 4 * c + F + B + 4 * c + OPT / N).epsilon(1e-6));
    CHECK(sgo["buckets_per_iteration"] == 8);
    // ZeRO-2 with 8 MB buckets (2 layers each): forward 8 ms; bucket 0 ready 4 ms into backward,
    // then the four reduce-scatters back to back (c > 4 ms), the step on the shard, four gathers.
    auto z2 = sharded_scenario({{"strategy", "zero2"}}, fidelity);
    z2["training"]["bucketing"] = {{"bucket_bytes", "8MB"}};
    const auto s2 = sharded_summary(tmp, "z2" + fidelity, z2);
    CHECK(median_s(s2) == doctest::Approx(IO + 4 * F + B + 4 * c + OPT / N + 4 * c).epsilon(1e-6));
    CHECK(s2["bucket_bytes"] == 8e6);
    // Without overlap (DeepSpeed's stage 1 default, overlap_comm false): after the whole backward.
    z2["training"]["sharding"]["strategy"] = "zero1";
    z2["training"]["bucketing"]["overlap"] = false;
    const auto s1 = sharded_summary(tmp, "z1" + fidelity, z2);
    CHECK(median_s(s1) == doctest::Approx(IO + 4 * F + 4 * B + 4 * c + OPT / N + 4 * c).epsilon(1e-6));
  }
}

TEST_CASE("fsdp_hybrid_shard: gathers and reduce-scatters in pairs and each shard all-reduced across the pair of replicas") {
  // Shard groups {0, 1} and {2, 3}, replica groups {0, 2} and {1, 3}: on the star no two groups share
  // a link. At 5 Gbps a pair's all-gather or reduce-scatter of a unit, g = call + alpha + M/2 beta
  // (6.42 ms), and the replicas' ring all-reduce of the M/2-byte shard, a = call + 2 alpha + M/2 beta
  // (6.43 ms), both exceed B: the stream never waits for compute once backward starts. Forward as
  // FULL_SHARD (IO + 4g + F), backward's gather(3) (t0 = IO + 5g + F); then gather(2), and per unit
  // a reduce-scatter and an all-reduce, the three remaining gathers queued between them:
  // t0 + 7g + 4a. The optimizer on a half: OPT / 2.
  const double beta = 8 / 5e9;
  const double g = CALL + ALPHA + UNIT / 2 * beta, a = CALL + 2 * ALPHA + UNIT / 2 * beta;
  TempDir tmp;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    const auto s = sharded_summary(
        tmp, "hybrid" + fidelity,
        sharded_scenario({{"strategy", "fsdp_hybrid_shard"}, {"units", 4}, {"shard_ranks", 2}}, fidelity, "5Gbps"));
    CHECK(median_s(s) == doctest::Approx(IO + 5 * g + F + 7 * g + 4 * a + OPT / 2).epsilon(1e-6));
    CHECK(s["buckets_per_iteration"] == 16);
    CHECK(s["sharding"]["shard_ranks"] == 2);
    CHECK(s["sharding"]["replicas"] == 2);
    // Bytes per rank: 3 passes of Psi over a pair, (1/2) each, and the shard's ring all-reduce among
    // 2 replicas, 2 (Psi / 2)(1/2).
    const double psi = 32e6;
    CHECK(s["comm_bytes_per_iteration"].get<double>() / N == doctest::Approx(3 * psi / 2 + psi / 2));
    // Sharded over 2: (4 + 4 + 8) Psi / 2 held, two units gathered.
    CHECK(s["sharding"]["memory_per_rank"]["total_bytes"].get<double>() == doctest::Approx(16 * 8e6 / 2 + 16e6));
  }
}

TEST_CASE("the engines agree under a slow worker and under a link trace") {
  TempDir tmp;
  auto slow = sharded_scenario({{"strategy", "fsdp_full_shard"}, {"units", 4}}, "analytic");
  slow["training"]["stragglers"] = {{"speed_factors", {1, 1, 1, 2}}};
  auto traced = sharded_scenario({{"strategy", "zero3"}, {"units", 2}}, "analytic");
  traced["network"]["link_traces"] = json::array({{{"bandwidth", json::array({json::array({0, "10Gbps"}),
                                                                              json::array({0.05, "2Gbps"})})}}});
  for (auto [name, sc] : {std::pair<std::string, json>{"slow", slow}, {"traced", traced}}) {
    CAPTURE(name);
    const auto a = sharded_summary(tmp, name + "a", sc);
    sc["network"]["fidelity"] = "flow";
    const auto f = sharded_summary(tmp, name + "f", sc);
    CHECK(a["iteration_time_s"].get<double>() == doctest::Approx(f["iteration_time_s"].get<double>()).epsilon(1e-6));
    CHECK(a["comm_bytes_per_iteration"].get<double>() == doctest::Approx(f["comm_bytes_per_iteration"].get<double>()));
  }
  // The slow worker computes twice as long: every rank waits for its gathers' partner.
  const auto even = sharded_summary(tmp, "even", sharded_scenario({{"strategy", "fsdp_full_shard"}, {"units", 4}}, "flow"));
  auto sf = slow;
  sf["network"]["fidelity"] = "flow";
  CHECK(sharded_summary(tmp, "slow2", sf)["iteration_time_s"].get<double>() > even["iteration_time_s"].get<double>());
}

TEST_CASE("bytes per rank: ZeRO-3 sends 3 Psi 1.5 x DDP and ZeRO-1 and ZeRO-2 send DDP's 2 Psi") {
  // Psi = 32 MB of fp32 parameters; each collective sends (N - 1) / N of what it gathers or reduces.
  const double psi = 8 * 4e6, share = (N - 1.0) / N;
  TempDir tmp;
  const auto ddp = sharded_summary(tmp, "ddp", sharded_scenario(json::object(), "flow"));
  const auto z3 = sharded_summary(tmp, "z3b", sharded_scenario({{"strategy", "zero3"}, {"units", 4}}, "flow"));
  const auto z2 = sharded_summary(tmp, "z2b", sharded_scenario({{"strategy", "zero2"}}, "flow"));
  const double per_rank_ddp = ddp["comm_bytes_per_iteration"].get<double>() / N;
  CHECK(per_rank_ddp == doctest::Approx(2 * psi * share));
  CHECK(z3["comm_bytes_per_iteration"].get<double>() / N == doctest::Approx(3 * psi * share));
  CHECK(z3["comm_bytes_per_iteration"].get<double>() / N / per_rank_ddp == doctest::Approx(1.5));
  CHECK(z2["comm_bytes_per_iteration"].get<double>() / N == doctest::Approx(2 * psi * share));
  CHECK(z3["sharding"]["closed_form_bytes_sent_per_rank_iteration"]["total"].get<double>() ==
        doctest::Approx(3 * psi * share));
}

TEST_CASE("memory per rank in summary.json and refused over device_memory") {
  // Psi = 8 M parameters, fp32: 4 + 4 bytes of parameters and gradients, Adam's 8 of moments.
  const double psi = 8e6;
  TempDir tmp;
  const auto z3 = sharded_summary(tmp, "z3m", sharded_scenario({{"strategy", "fsdp_full_shard"}, {"units", 4}}, "analytic"));
  const auto& m = z3["sharding"]["memory_per_rank"];
  CHECK(m["parameters_bytes"].get<double>() == doctest::Approx(4 * psi / N));
  CHECK(m["gradients_bytes"].get<double>() == doctest::Approx(4 * psi / N));
  CHECK(m["optimizer_state_bytes"].get<double>() == doctest::Approx(8 * psi / N));
  // Two units of 2 M parameters gathered at once (the one computing and the one prefetched).
  CHECK(m["gathered_parameters_peak_bytes"].get<double>() == doctest::Approx(2 * 2e6 * 4));
  CHECK(m["total_bytes"].get<double>() == doctest::Approx(16 * psi / N + 16e6));
  const auto z1 = sharded_summary(tmp, "z1m", sharded_scenario({{"strategy", "zero1"}}, "analytic"));
  CHECK(z1["sharding"]["memory_per_rank"]["total_bytes"].get<double>() == doctest::Approx((4 + 4) * psi + 8 * psi / N));
  // Mixed precision, stated: ZeRO's K = 12.
  const auto mixed = sharded_summary(
      tmp, "mixed",
      sharded_scenario({{"strategy", "zero2"},
                        {"bytes_per_parameter", {{"parameters", 2}, {"gradients", 2}, {"optimizer_state", 12}}}},
                       "analytic"));
  CHECK(mixed["sharding"]["memory_per_rank"]["total_bytes"].get<double>() == doctest::Approx(2 * psi + 14 * psi / N));
  // 48 MB held by a stage-3 rank against a 40 MB device.
  auto over = sharded_scenario({{"strategy", "fsdp_full_shard"}, {"units", 4}, {"device_memory", "40MB"}}, "analytic");
  CHECK(sharded_refusal(tmp, over) ==
        "ddlsim: error: /training/sharding/device_memory: strategy \"fsdp_full_shard\" on 4 workers holds 48 MB per rank "
        "(8 MB parameters, 8 MB gradients, 16 MB optimizer state, 16 MB gathered parameters at the peak; activations "
        "not counted), over the device's 40 MB: shard further (a higher stage) or use more workers\n");
  over["training"]["sharding"]["device_memory"] = "48MB";
  CHECK(sharded_summary(tmp, "fits", over)["sharding"]["device_memory_bytes"] == 48e6);
}

TEST_CASE("what sharding refuses each with its path and the way out") {
  TempDir tmp;
  auto s = sharded_scenario({{"strategy", "fsdp_full_shard"}}, "flow");
  s["training"]["compressor"] = {{"name", "fp16"}};
  s["training"]["compression_cost"] = {{"encode", {{"fixed_s", 0}}}, {"decode", {{"fixed_s", 0}}}};
  CHECK(sharded_refusal(tmp, s).find("/training/sharding/strategy: sharded data parallelism reduce-scatters dense "
                                     "gradients; compressor \"fp16\"") != std::string::npos);
  s = sharded_scenario({{"strategy", "zero3"}}, "flow");
  s["training"]["sync"] = {{"name", "local_sgd"}};
  CHECK(sharded_refusal(tmp, s).find("use sync model \"bsp\" with \"aggregation\": \"allreduce\", not \"local_sgd\"") !=
        std::string::npos);
  s = sharded_scenario({{"strategy", "zero3"}}, "flow");
  s["training"]["collective"] = {{"name", "tree"}};
  CHECK(sharded_refusal(tmp, s).find("/training/collective/name: sharded data parallelism all-gathers parameters "
                                     "and reduce-scatters gradients with rings") != std::string::npos);
  CHECK(sharded_refusal(tmp, s).find("use \"ring\" or leave \"collective\" out, not \"tree\"") != std::string::npos);
  s["training"]["collective"] = {{"name", "ring"}};  // what it runs anyway: accepted
  CHECK(ddlsim::test::ddlsim("validate " + tmp.write("ring.json", s.dump())).exit_code == 0);
  s = sharded_scenario({{"strategy", "fsdp_full_shard"}}, "flow");
  s["training"]["bucketing"] = {{"bucket_bytes", "1MB"}};
  CHECK(sharded_refusal(tmp, s).find("/training/bucketing: strategy \"fsdp_full_shard\" gathers and reduce-scatters "
                                     "unit by unit") != std::string::npos);
  s = sharded_scenario({{"strategy", "zero2"}, {"units", 2}}, "flow");
  CHECK(sharded_refusal(tmp, s) ==
        "ddlsim: error: /training/sharding/units: only with a strategy that gathers each unit's parameters (\"zero3\", "
        "\"fsdp_full_shard\", \"fsdp_shard_grad_op\"), not \"zero2\"\n");
  s = sharded_scenario({{"strategy", "zero3"}, {"units", 9}}, "flow");
  CHECK(sharded_refusal(tmp, s).find("/training/sharding/units: expected an integer in [1, 8]") != std::string::npos);
  s = sharded_scenario({{"strategy", "zero4"}}, "flow");
  CHECK(sharded_refusal(tmp, s).find("/training/sharding/strategy") != std::string::npos);
  s = sharded_scenario({{"strategy", "fsdp_hybrid_shard"}}, "flow");
  CHECK(sharded_refusal(tmp, s) ==
        "ddlsim: error: /training/sharding/shard_ranks: \"fsdp_hybrid_shard\" shards over groups of ranks: give the "
        "group's size, a divisor of the 4 workers (a node's GPUs; the platform has no nodes to take it from)\n");
  s = sharded_scenario({{"strategy", "fsdp_hybrid_shard"}, {"shard_ranks", 3}}, "flow");
  CHECK(sharded_refusal(tmp, s) == "ddlsim: error: /training/sharding/shard_ranks: expected a divisor of the 4 workers, got 3\n");
  s = sharded_scenario({{"strategy", "zero3"}, {"shard_ranks", 2}}, "flow");
  CHECK(sharded_refusal(tmp, s) == "ddlsim: error: /training/sharding/shard_ranks: only with \"fsdp_hybrid_shard\", not "
                                   "\"zero3\" (which shards over every worker)\n");
  s = sharded_scenario({{"device_memory", "80GB"}}, "flow");
  CHECK(sharded_refusal(tmp, s) ==
        "ddlsim: error: /training/sharding/device_memory: only with a \"strategy\" other than \"none\"\n");
}
