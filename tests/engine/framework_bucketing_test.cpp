// Framework bucketing end to end: Horovod's cycles delay each fused all-reduce to the
// cycle after its gradients are ready; DDP's settings reach summary.json; every bad
// value is one line naming its JSON path (exit 2). Times derived from the ring's
// closed form on the star (alpha = 2 x link latency, beta = 1 / bandwidth).
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr int N = 4;
constexpr double ALPHA = 2 * 5e-6;
constexpr double BETA = 8 / 10e9;
constexpr double CALL = 10e-6;

double ring(double bytes) { return CALL + 2.0 * (N - 1) * ALPHA + 2.0 * (N - 1) / N * bytes * BETA; }

json scenario(const json& bucketing, const std::string& fidelity = "flow", const std::string& sync = "bsp") {
  return json{{"name", "framework"},
              {"platform", {{"topology", "star"}, {"workers", N}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}}},
              {"network", {{"fidelity", fidelity}}},
              {"workload", {{"synthetic", {{"layers", 2}, {"forward_s", "1ms"}, {"backward_s", "1.2ms"}, {"grad_bytes", "0.5MB"}}},
                            {"iterations", 3}}},
              {"training", {{"sync", {{"name", sync}}}, {"bucketing", bucketing}}},
              {"output", {{"timeline", false}}}};
}

json summary(const TempDir& tmp, const std::string& name, const json& s) {
  const std::string file = tmp.write(name + ".json", s.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
}

/// `ddlsim validate` on a bad scenario: exit 2 and its one-line error.
std::string refused(const TempDir& tmp, const json& s) {
  auto r = ddlsim::test::ddlsim("validate " + tmp.write("bad.json", s.dump()));
  CHECK(r.exit_code == 2);
  return r.err;
}

}  // namespace

TEST_CASE("horovod: each fused all-reduce starts at the cycle after its gradients are ready") {
  // Forward 2 ms; backward makes layer 1's gradient ready 1.2 ms in and layer 0's 2.4 ms in.
  // With a 1 ms cycle they go at the cycles of 2 ms and 3 ms (4 and 5 ms into the iteration),
  // each as its own 0.5 MB all-reduce (different cycles): the second ends at 5 ms + ring(0.5 MB),
  // the first (at 4 ms) having ended before. The size-cap policy would start them at 3.2 and 4.4.
  TempDir tmp;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    const auto s = summary(tmp, "hvd-" + fidelity, scenario({{"policy", "horovod"}, {"cycle_time", "1ms"}}, fidelity));
    CHECK(s["buckets_per_iteration"] == 2);
    CHECK(s["bucketing_policy"] == "horovod");
    CHECK(s["cycle_time_s"].get<double>() == doctest::Approx(1e-3));
    CHECK(s["fusion_threshold_bytes"] == 134217728.0);  // Horovod's default, 128 MiB
    CHECK(s["iteration_time_s"].get<double>() == doctest::Approx(5e-3 + ring(0.5e6)).epsilon(1e-6));
    const auto size = summary(tmp, "size-" + fidelity, scenario({{"bucket_bytes", "0.5MB"}}, fidelity));
    CHECK(size["iteration_time_s"].get<double>() == doctest::Approx(4.4e-3 + ring(0.5e6)).epsilon(1e-6));
    // Without overlap both gradients are ready when backward ends (4.4 ms): the cycle at 5 ms
    // fuses them into one 1 MB all-reduce.
    const auto fused = summary(tmp, "hvd-no-overlap-" + fidelity,
                               scenario({{"policy", "horovod"}, {"cycle_time", "1ms"}, {"overlap", false}}, fidelity));
    CHECK(fused["buckets_per_iteration"] == 1);
    CHECK(fused["iteration_time_s"].get<double>() == doctest::Approx(5e-3 + ring(1e6)).epsilon(1e-6));
  }
}

TEST_CASE("ddp settings and max_inflight reach summary.json, with DDP's defaults") {
  TempDir tmp;
  const auto s = summary(tmp, "ddp", scenario({{"policy", "ddp"}, {"max_inflight", 2}}));
  CHECK(s["bucketing_policy"] == "ddp");
  CHECK(s["first_bucket_bytes"] == 1048576.0);  // DDP's _DEFAULT_FIRST_BUCKET_BYTES
  CHECK(s["bucket_bytes"] == 26214400.0);       // bucket_cap_mb = 25 means 25 MiB
  CHECK(s["max_inflight"] == 2);
  CHECK(s["buckets_per_iteration"] == 1);  // 0.5 MB < 1 MiB, + 0.5 MB = 1 MB < 1 MiB: one bucket
  const auto size = summary(tmp, "size", scenario(json::object()));
  CHECK(size["bucket_bytes"] == 25e6);
  CHECK(size["max_inflight"] == 1);
  CHECK_FALSE(size.contains("first_bucket_bytes"));
}

TEST_CASE("bad bucketing values name their JSON path and the valid choices") {
  TempDir tmp;
  const std::string e = "ddlsim: error: /training/bucketing/";
  CHECK(refused(tmp, scenario({{"policy", "ddq"}})) ==
        e + "policy: unknown value \"ddq\"; valid values are: size, mgwfbp, ddp, horovod\n");
  CHECK(refused(tmp, scenario({{"first_bucket_bytes", "1MiB"}})) ==
        e + "first_bucket_bytes: only with \"policy\": \"ddp\", not \"size\"\n");
  CHECK(refused(tmp, scenario({{"policy", "horovod"}, {"bucket_bytes", "25MB"}})) ==
        e + "bucket_bytes: only with \"policy\": \"size\" or \"ddp\", not \"horovod\"\n");
  CHECK(refused(tmp, scenario({{"policy", "ddp"}, {"cycle_time", "1ms"}})) ==
        e + "cycle_time: only with \"policy\": \"horovod\", not \"ddp\"\n");
  CHECK(refused(tmp, scenario({{"fusion_threshold_bytes", "64MB"}})) ==
        e + "fusion_threshold_bytes: only with \"policy\": \"horovod\", not \"size\"\n");
  CHECK(refused(tmp, scenario({{"policy", "horovod"}, {"cycle_time", "-1ms"}})) ==
        e + "cycle_time: time must not be negative, got \"-1ms\"\n");
  CHECK(refused(tmp, scenario({{"policy", "horovod"}, {"cycle_time", 5}})) ==
        e + "cycle_time: a cycle time must be in [0, 1 s] (HOROVOD_CYCLE_TIME is in milliseconds: write \"1ms\"; a "
            "bare number is seconds), got 5 s\n");
  CHECK(refused(tmp, scenario({{"policy", "horovod"}, {"fusion_threshold_bytes", "-5MB"}})) ==
        e + "fusion_threshold_bytes: size must not be negative, got \"-5MB\"\n");
  CHECK(refused(tmp, scenario({{"policy", "ddp"}, {"first_bucket_bytes", true}})).rfind(e + "first_bucket_bytes: ", 0) == 0);
  CHECK(refused(tmp, scenario({{"max_inflight", 0}})) == e + "max_inflight: expected an integer in [1, 64], got 0\n");
  CHECK(refused(tmp, scenario({{"max_inflight", 1.5}})) == e + "max_inflight: expected an integer, got the number 1.5\n");
}

TEST_CASE("combinations that max_inflight or horovod cannot honour are refused") {
  TempDir tmp;
  const std::string e = "ddlsim: error: /training/bucketing/";
  json ps = scenario({{"max_inflight", 2}}, "flow", "asp");
  ps["platform"]["parameter_servers"] = 1;
  CHECK(refused(tmp, ps) == e + "max_inflight: concurrent collectives apply to all-reduces; sync model \"asp\" "
                                "aggregates through parameter servers: use 1\n");
  json gossip = scenario({{"max_inflight", 2}}, "flow", "gossip");
  CHECK(refused(tmp, gossip) == e + "max_inflight: concurrent collectives apply to all-reduces; sync model \"gossip\" "
                                    "runs no all-reduce: use 1\n");
  json coll_ps = scenario({{"max_inflight", 2}});
  coll_ps["training"]["collective"] = {{"name", "ps"}};
  coll_ps["platform"]["parameter_servers"] = 1;
  CHECK(refused(tmp, coll_ps) == e + "max_inflight: collective \"ps\" runs its all-reduces through the parameter "
                                     "servers one at a time: use 1, or a collective without servers\n");
  json traced = scenario({{"max_inflight", 2}}, "analytic");
  traced["network"]["link_traces"] = json::array({{{"bandwidth", json::array({json::array({0, "5Gbps"})})}}});
  CHECK(refused(tmp, traced) == e + "max_inflight: at analytic fidelity, concurrent all-reduces share their closed "
                                    "forms' transfer terms, which time-varying links (network.link_traces) leave "
                                    "undefined: use 1, or \"fidelity\": \"flow\"\n");
  CHECK(refused(tmp, scenario({{"policy", "horovod"}}, "flow", "local_sgd")) ==
        e + "policy: \"horovod\" launches gradient all-reduces at the background thread's cycles during backward; "
            "sync model \"local_sgd\" does not all-reduce its gradients as they become ready: use \"size\" or \"ddp\"\n");
  json compressed = scenario({{"policy", "horovod"}});
  compressed["training"]["compressor"] = {{"name", "fp16"}};
  compressed["training"]["compression_cost"] = {{"encode", {{"fixed_s", 0}}}, {"decode", {{"fixed_s", 0}}}};
  CHECK(refused(tmp, compressed) ==
        e + "policy: \"horovod\" plans its cycles from the profile's backward times, which a compressor's encode "
            "before each submit would shift: use \"size\" (with \"bucket_bytes\" as the fusion threshold) with a "
            "compressor\n");
}
