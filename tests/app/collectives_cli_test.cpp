// `ddlsim collectives` as a user drives it: the parameter-server collective with
// one worker, servers that never reshape the topology, the fastest marker, CLI
// sizes, per-algorithm parameters and network models. Expected values are
// closed forms derived here from alpha, beta, M and N (the CSV prints 9
// significant digits: closed forms are compared to 1e-8, simulations to 1e-6).
//
// Reference star: every host has one link of latency l and bandwidth B to the
// switch, so a message costs alpha = 2 l plus its bytes times beta = 1 / B.
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <map>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr double LAT = 1e-6;              // -l 1us
constexpr double B = 25e9 / 8;            // -b 25Gbps, bytes/s
constexpr double BETA = 1 / B;
constexpr double ALPHA = 2 * LAT;         // star: two links per path
constexpr double MIB = 1048576.0;
// Pure alpha-beta: no fixed call cost (its own test adds the default back).
constexpr const char* NET = "-b 25Gbps -l 1us --call-cost 0";

using Row = ddlsim::test::CollectiveRow;
using Rows = std::map<std::string, Row>;

ddlsim::test::CommandResult collectives(const std::string& args) {
  return ddlsim::test::ddlsim(fmt::format("collectives {} {}", NET, args));
}

Rows csv(const std::string& args, std::string* err = nullptr) {
  auto r = collectives("--csv " + args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  if (err != nullptr) *err = r.err;
  return ddlsim::test::parse_collectives_csv(r.out);
}

/// Exit code 2, nothing on stdout, exactly `message` on stderr.
void check_refused(const std::string& args, const std::string& message) {
  CAPTURE(args);
  auto r = ddlsim::test::ddlsim("collectives " + args);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ddlsim: error: " + message + "\n");
}

double time_of(const Row& r) { return r.simulated_s >= 0 ? r.simulated_s : r.analytic_s; }

}  // namespace

TEST_CASE("ps with one worker: push M to the server and pull M back, 2 alpha + 2 M beta") {
  // One worker, S servers: S flows of M/S share the worker's uplink (push: alpha + M beta),
  // then its downlink (pull: alpha + M beta), whatever S.
  const double expected = 2 * ALPHA + 2 * MIB * BETA;
  for (const char* servers : {"", "--servers 1", "--servers 3"})
    for (const char* granularity : {"stepwise", "pipelined"}) {
      CAPTURE(servers);
      CAPTURE(granularity);
      auto rows = csv(fmt::format("-n 1 -m 1MiB --algorithms ps {} --granularity {}", servers, granularity));
      REQUIRE(rows.count("ps") == 1);
      CHECK(rows["ps"].analytic_s == doctest::Approx(expected).epsilon(1e-8));
      CHECK(rows["ps"].simulated_s == doctest::Approx(expected).epsilon(1e-6));
      CHECK(rows["ps"].fastest);
    }
  // The closed form at N = 1 is not 0 any more.
  CHECK(expected > 0);
}

TEST_CASE("BSP with collective ps and one worker: iteration = compute + 2 alpha + 2 M beta") {
  constexpr double LINK_LAT = 5e-6, LINK_BPS = 10e9 / 8;  // 10 Gbps, 5 us
  constexpr int LAYERS = 3;
  constexpr double FWD = 1e-3, BWD = 2e-3, OPT = 0.5e-3, IO = 0.25e-3, GRAD = 1'000'000;
  const double m = LAYERS * GRAD;
  const double call = 10e-6;  // network.collective_call_cost: a lone worker with a server still makes the call
  const double expected = IO + LAYERS * (FWD + BWD) + OPT + call + 2 * (2 * LINK_LAT) + 2 * m / LINK_BPS;
  TempDir tmp;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    const json doc{
        {"name", "ps1"},
        {"platform",
         {{"topology", "star"}, {"workers", 1}, {"parameter_servers", 1},
          {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}}},
        {"network", {{"fidelity", fidelity}}},
        {"workload",
         {{"synthetic",
           {{"layers", LAYERS}, {"forward_s", FWD}, {"backward_s", BWD}, {"grad_bytes", GRAD}, {"optimizer_s", OPT},
            {"io_s", IO}}},
          {"iterations", 3}}},
        {"training",
         {{"sync", {{"name", "bsp"}}},
          {"collective", {{"name", "ps"}}},
          {"bucketing", {{"bucket_bytes", "1TB"}, {"overlap", false}}}}}};
    const std::string file = tmp.write(std::string("ps1-") + fidelity + ".json", doc.dump());
    const std::string out = tmp.file(std::string("out-") + fidelity);
    auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, out));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const json summary = json::parse(ddlsim::test::slurp(std::filesystem::path(out) / "summary.json"));
    CHECK(summary["iteration_time_s"].get<double>() == doctest::Approx(expected).epsilon(1e-6));
    CHECK(summary["exposed_comm_time_per_iteration_s"].get<double>() ==
          doctest::Approx(call + 2 * (2 * LINK_LAT) + 2 * m / LINK_BPS).epsilon(1e-6));
  }
}

TEST_CASE("collectives builds the topology as asked, servers only for ps, on a link of their own") {
  const double m = MIB;
  // 16 workers on the default torus: 4 x 4, so the farthest worker from worker 0 is 4 hops
  // (a 1 x 17 ring, what adding a server host used to build, would be 8).
  const double ring_torus = 2 * 15 * (4 * LAT) + 2 * 15.0 / 16 * m * BETA;
  auto torus = csv("-n 16 -m 1MiB -t torus --algorithms ring --fidelity analytic");
  CHECK(torus["ring"].analytic_s == doctest::Approx(ring_torus).epsilon(1e-8));
  // With ps, the server hangs off worker 0 (a torus has no switch) and the ring row does not move;
  // ps's alpha is still the 4-hop worst path from worker 0 (the server is 1 hop away).
  auto torus_ps = csv("-n 16 -m 1MiB -t torus --algorithms ring,ps --fidelity analytic");
  CHECK(torus_ps["ring"].analytic_s == doctest::Approx(ring_torus).epsilon(1e-8));
  CHECK(torus_ps["ps"].analytic_s == doctest::Approx(2 * (4 * LAT) + 2 * 16 * m * BETA).epsilon(1e-8));
  auto table = collectives("-n 16 -m 1MiB -t torus --algorithms ring,ps --fidelity analytic");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.rfind("16 workers + 1 server (25 Gbps link each, servers attached to worker-0), 1.049 MB per rank, "
                        "torus topology",
                        0) == 0);

  // A k = 4 fat tree holds exactly 16 hosts: 16 workers build, with or without ps. Host
  // diameter 6 links; with full bisection the ring's flows never share a link.
  const double ring_ft = 2 * 15 * (6 * LAT) + 2 * 15.0 / 16 * m * BETA;
  std::string err;
  auto ft = csv("-n 16 -m 1MiB -t fat_tree --topology-params '{\"k\":4}'", &err);
  CHECK(ft.count("ps") == 0);  // no server asked for: not run, left out of the CSV
  CHECK(err == "ddlsim: note: ps not run: needs --servers >= 1\n");
  CHECK(ft["ring"].analytic_s == doctest::Approx(ring_ft).epsilon(1e-8));
  CHECK(ft["ring"].simulated_s == doctest::Approx(ring_ft).epsilon(1e-6));
  auto ft_ps = csv("-n 16 -m 1MiB -t fat_tree --topology-params '{\"k\":4}' --algorithms ring,ps");
  CHECK(ft_ps["ring"].analytic_s == ft["ring"].analytic_s);
  CHECK(ft_ps["ring"].simulated_s == doctest::Approx(ft["ring"].simulated_s).epsilon(1e-8));
  REQUIRE(ft_ps.count("ps") == 1);
  CHECK(ft_ps["ps"].analytic_s == doctest::Approx(2 * (6 * LAT) + 2 * 16 * m * BETA).epsilon(1e-8));
}

TEST_CASE("ps without servers: listed as not run when every algorithm is compared, refused when named") {
  for (const char* servers : {"", "--servers 0"}) {
    CAPTURE(servers);
    auto r = collectives(fmt::format("-n 4 -m 1MiB --fidelity analytic {}", servers));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.rfind("4 workers, 1.049 MB per rank, star topology", 0) == 0);
    CHECK(r.out.find("\nps                     allreduce                    -              -           -           -"
                     "  not run: needs --servers >= 1\n") != std::string::npos);
    CHECK(r.err.empty());
  }
  check_refused("-n 4 --algorithms ring,ps --servers 0",
                "--servers: collective \"ps\" needs at least 1 parameter server, got 0");
  // --servers 2 with every algorithm: ps runs through 2 sharded servers: 2 alpha + 2 max(N/S, 1) M beta.
  auto rows = csv("-n 4 -m 1MiB --servers 2");
  REQUIRE(rows.count("ps") == 1);
  CHECK(rows["ps"].analytic_s == doctest::Approx(2 * ALPHA + 2 * 2 * MIB * BETA).epsilon(1e-8));
  CHECK(rows["ps"].simulated_s == doctest::Approx(rows["ps"].analytic_s).epsilon(1e-6));
}

TEST_CASE("--server-bandwidth: each server's own link") {
  // N = 8 workers, S = 1 server on a link of bandwidth Bs. Push: N flows of M, each limited by its
  // worker's uplink B and by the server's downlink Bs / N: alpha + M max(1 / B, N / (S Bs)); the pull mirrors it.
  const int n = 8;
  for (double bs_gbps : {50.0, 400.0, 10.0}) {
    CAPTURE(bs_gbps);
    const double bs = bs_gbps * 1e9 / 8;
    const double expected = 2 * ALPHA + 2 * MIB * std::max(1 / B, n / bs);
    auto rows = csv(fmt::format("-n {} -m 1MiB --algorithms ps,ring --server-bandwidth {}Gbps", n, bs_gbps));
    CHECK(rows["ps"].simulated_s == doctest::Approx(expected).epsilon(1e-6));
    // The closed form takes beta from the slowest link, the server's included.
    CHECK(rows["ps"].analytic_s == doctest::Approx(2 * ALPHA + 2 * n * MIB / std::min(B, bs)).epsilon(1e-8));
    // Worker-only algorithms do not see the server link.
    CHECK(rows["ring"].analytic_s == doctest::Approx(2 * 7 * ALPHA + 2 * 7.0 / 8 * MIB * BETA).epsilon(1e-8));
  }
  check_refused("-n 8 --algorithms ps --server-bandwidth 10",
                "--server-bandwidth: \"10\" has no unit; a bandwidth needs one because bits and bytes per second "
                "differ by 8: e.g. 25Gbps (bits) or 3.125GBps (bytes); units: bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, "
                "MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps");
}

TEST_CASE("fastest: exactly the real algorithms with the minimum time of their operation") {
  // N = 64, M = 1 KiB: on the ideal star direct's closed form 2 alpha + 2 (N-1)/N M beta is the
  // smallest all-reduce; auto resolves to it and runs the same schedule, so they tie, and only
  // direct is marked.
  const double direct = 2 * ALPHA + 2 * 63.0 / 64 * 1024 * BETA;
  auto rows = csv("-n 64 -m 1KiB");
  REQUIRE(rows.count("auto") == 1);
  CHECK(rows["auto"].resolved == "direct");
  CHECK_FALSE(rows["auto"].fastest);
  CHECK(rows["direct"].fastest);
  CHECK(rows["direct"].analytic_s == doctest::Approx(direct).epsilon(1e-8));
  CHECK(rows["direct"].simulated_s == doctest::Approx(direct).epsilon(1e-6));
  std::map<std::string, double> best;
  for (const auto& [name, row] : rows)
    if (row.resolved.empty())
      best[row.operation] = best.count(row.operation) ? std::min(best[row.operation], time_of(row)) : time_of(row);
  std::map<std::string, int> marked;
  for (const auto& [name, row] : rows) {
    CAPTURE(name);
    if (!row.resolved.empty()) continue;
    CHECK(row.fastest == (time_of(row) <= best[row.operation] * (1 + 1e-9)));
    marked[row.operation] += row.fastest ? 1 : 0;
  }
  for (const char* op : {"allreduce", "allgather", "reduce_scatter", "broadcast"}) {
    CAPTURE(op);
    CHECK(marked[op] >= 1);
  }
  CHECK(marked["allreduce"] == 1);

  // auto standing for an algorithm that is not compared is the fastest itself.
  auto alone = csv("-n 64 -m 1KiB --algorithms auto,ring");
  CHECK(alone["auto"].resolved == "direct");
  CHECK(alone["auto"].fastest);
  CHECK_FALSE(alone["ring"].fastest);

  // Ties are all marked: one worker costs every worker-only algorithm 0; with two workers
  // ring (2(N-1) alpha + 2(N-1)/N M beta) and direct (2 alpha + 2(N-1)/N M beta) are both 2 alpha + M beta.
  auto one = csv("-n 1 -m 1MiB --algorithms ring,tree,direct");
  for (const char* name : {"ring", "tree", "direct"}) {
    CAPTURE(name);
    CHECK(one[name].simulated_s == 0.0);
    CHECK(one[name].fastest);
  }
  auto two = csv("-n 2 -m 1MiB --algorithms ring,direct,master_worker");
  CHECK(two["ring"].analytic_s == doctest::Approx(2 * ALPHA + MIB * BETA).epsilon(1e-8));
  CHECK(two["direct"].analytic_s == doctest::Approx(2 * ALPHA + MIB * BETA).epsilon(1e-8));
  CHECK(two["ring"].fastest);
  CHECK(two["direct"].fastest);
  CHECK_FALSE(two["master_worker"].fastest);  // 2 alpha + 2 M beta
}

TEST_CASE("sizes and times on the command line: a bare number is bytes or seconds, a bare bandwidth is refused") {
  const double ring4 = 2 * 3 * ALPHA + 2 * 3.0 / 4 * MIB * BETA;
  auto with_unit = csv("-n 4 -m 1MiB --algorithms ring --fidelity analytic");
  auto bare = ddlsim::test::ddlsim("collectives --csv -n 4 -m 1048576 -b 25Gbps -l 0.000001 --call-cost 0 "
                                   "--algorithms ring --fidelity analytic");
  REQUIRE_MESSAGE(bare.exit_code == 0, bare.err);
  CHECK(with_unit["ring"].analytic_s == doctest::Approx(ring4).epsilon(1e-8));
  const auto bare_csv = ddlsim::test::Csv::parse(bare.out);
  const auto bare_ring = bare_csv.find("algorithm", "ring");
  REQUIRE(bare_ring.has_value());
  CHECK(bare_csv.at(*bare_ring, "operation") == "allreduce");
  CHECK(bare_csv.at(*bare_ring, "resolved").empty());
  CHECK(bare_csv.at(*bare_ring, "analytic_time_s") == fmt::format("{:.9g}", ring4));
  // --bytes 1048576 is 1 MiB as in nccl-tests (was: missing unit).
  auto bytes_only = csv("-n 4 -m 1048576 --algorithms ring --fidelity analytic");
  CHECK(bytes_only["ring"].analytic_s == with_unit["ring"].analytic_s);
  check_refused("-n 4 -b 100",
                "--bandwidth: \"100\" has no unit; a bandwidth needs one because bits and bytes per second differ by "
                "8: e.g. 25Gbps (bits) or 3.125GBps (bytes); units: bps, Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, "
                "GBps, TBps, KiBps, MiBps, GiBps, TiBps");
  check_refused("-n 4 --bytes=-5", "--bytes: size must not be negative, got \"-5\"");
  check_refused("-n 4 -m 5parsecs", "--bytes: unknown size in bytes unit \"parsecs\" in \"5parsecs\"; expected one of B, "
                                    "KB, MB, GB, TB, KiB, MiB, GiB, TiB");
  check_refused("-n 4 --latency=-1", "--latency: time must not be negative, got \"-1\"");
  check_refused("-n 4 -m inf", "--bytes: \"inf\" is not a finite size");
}

TEST_CASE("--params: per-algorithm parameters, validated with the scenarios' messages") {
  // N = 7: ring with s segments 2(N-1) s alpha + 2(N-1)/N M beta; the perfect binary tree
  // (depth D = 2) with s segments 2(D + s - 1)(alpha + 2 M beta / s).
  const int n = 7;
  const double ring = 2 * (n - 1) * 4 * ALPHA + 2.0 * (n - 1) / n * MIB * BETA;
  const double tree = 2 * (2 + 8 - 1) * (ALPHA + 2 * MIB * BETA / 8);
  auto rows = csv("-n 7 -m 1MiB --algorithms ring,tree --params '{\"ring\": {\"segments\": 4}, \"tree\": {\"segments\": 8}}'");
  CHECK(rows["ring"].analytic_s == doctest::Approx(ring).epsilon(1e-8));
  CHECK(rows["ring"].simulated_s == doctest::Approx(ring).epsilon(1e-6));
  CHECK(rows["tree"].analytic_s == doctest::Approx(tree).epsilon(1e-8));
  CHECK(rows["tree"].simulated_s == doctest::Approx(tree).epsilon(1e-6));
  // Every algorithm compared: the others keep their defaults.
  auto all = csv("-n 7 -m 1MiB --fidelity analytic --params '{\"ring\": {\"segments\": 4}}'");
  CHECK(all["ring"].analytic_s == doctest::Approx(ring).epsilon(1e-8));
  CHECK(all["tree"].analytic_s == doctest::Approx(2 * 2 * (ALPHA + 2 * MIB * BETA)).epsilon(1e-8));

  check_refused("-n 8 --params '{\"ring\": {\"segmnts\": 4}}'",
                "--params/ring/segmnts: unknown key \"segmnts\"; valid keys are: segments");
  check_refused("-n 8 --params '{\"ring\": {\"segments\": 0}}'",
                "--params/ring/segments: expected an integer in [1, 1048576], got 0");
  check_refused("-n 8 --algorithms ring --params '{\"tree\": {\"segments\": 8}}'",
                "--params/tree: \"tree\" is not among the compared algorithms (ring)");
  check_refused("-n 8 --params '[1]'", "--params: expected an object, got an array");
  check_refused("-n 8 --params '{\"ring\": 3}'", "--params/ring: expected an object, got the number 3");
  check_refused("-n 8 --algorithms torus2d --params '{\"torus2d\": {\"rows\": 3}}'",
                "--params/torus2d: \"torus2d\" cannot run here: torus2d: rows = 3 does not divide the group size 8");
  auto unknown = collectives("-n 8 --params '{\"rign\": {}}'");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.rfind("ddlsim: error: --params/rign: unknown collective \"rign\"; valid names are: artopk_ring, ", 0) == 0);
}

TEST_CASE("--model: tcp, and calibrated with its latency and bandwidth factors") {
  // calibrated = ideal with every route latency times lf and every bandwidth times bf:
  // ring on 8 ranks: 2(N-1) lf alpha + 2(N-1)/N M beta / bf.
  const double lf = 2, bf = 0.5;
  auto cal = csv("-n 8 -m 1MiB --algorithms ring --model calibrated --latency-factor 2 --bandwidth-factor 0.5");
  // The closed form sees the same factors (as analytic fidelity does in scenarios).
  CHECK(cal["ring"].analytic_s == doctest::Approx(2 * 7 * lf * ALPHA + 2 * 7.0 / 8 * MIB * BETA / bf).epsilon(1e-8));
  CHECK(cal["ring"].simulated_s == doctest::Approx(2 * 7 * lf * ALPHA + 2 * 7.0 / 8 * MIB * BETA / bf).epsilon(1e-6));
  auto table = collectives("-n 8 -m 1MiB --algorithms ring --model calibrated");
  CHECK(table.out.find("flow fidelity (stepwise, calibrated network)") != std::string::npos);
  auto tcp = csv("-n 8 -m 1MiB --algorithms ring --model tcp");
  // tcp: the closed form stays the ideal network's; LV08 (latency x 13.01, bandwidth x 0.97,
  // plus cross traffic) is never faster than that bound.
  CHECK(tcp["ring"].analytic_s == doctest::Approx(2 * 7 * ALPHA + 2 * 7.0 / 8 * MIB * BETA).epsilon(1e-8));
  CHECK(tcp["ring"].simulated_s >= 2 * 7 * 13.01 * ALPHA + 2 * 7.0 / 8 * MIB * BETA / 0.97);
  check_refused("-n 8 --latency-factor 2", "--latency-factor: only valid with --model calibrated, not \"ideal\"");
  check_refused("-n 8 --model tcp --bandwidth-factor 2", "--bandwidth-factor: only valid with --model calibrated, not \"tcp\"");
  check_refused("-n 8 --model calibrated --latency-factor 0",
                "--latency-factor: expected a number in [1e-09, 1000000000], got 0.0");
  check_refused("-n 8 --model fast", "--model: unknown value \"fast\"; valid values are: ideal, tcp, calibrated");
  // The scenario's rule (network.bandwidth_factor at most 1), checked by the same function.
  check_refused("-n 8 --model calibrated --bandwidth-factor 1.04",
                "--bandwidth-factor: must be at most 1 (a factor of 1.04 would move bytes faster than the link: no model "
                "may beat the wire); protocol overheads go in software.protocol_efficiency");
}

TEST_CASE("collectives --help names every option") {
  auto r = ddlsim::test::ddlsim("collectives --help");
  CHECK(r.exit_code == 0);
  for (const char* text : {"--params", "--server-bandwidth", "--latency-factor", "--bandwidth-factor", "calibrated",
                           "bare number of bytes", "bare number of seconds", "worker 0"}) {
    CAPTURE(text);
    CHECK(r.out.find(text) != std::string::npos);
  }
}

TEST_CASE("collectives: every call pays the fixed call cost in both columns") {
  // Default 10 us and --call-cost 250us, on top of the ring's closed form; one worker: no call.
  const double ring4 = 2 * 3 * ALPHA + 2 * 3.0 / 4 * MIB * BETA;
  for (const auto& [option, call] : std::vector<std::pair<std::string, double>>{{"", 10e-6}, {"--call-cost 250us", 250e-6}}) {
    CAPTURE(option);
    auto r = ddlsim::test::ddlsim("collectives --csv -n 4 -m 1MiB -b 25Gbps -l 1us --algorithms ring " + option);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto table = ddlsim::test::Csv::parse(r.out);
    const auto ring_row = table.find("algorithm", "ring");
    REQUIRE(ring_row.has_value());
    REQUIRE(table.at(*ring_row, "operation") == "allreduce");
    REQUIRE(table.at(*ring_row, "resolved").empty());
    CHECK(table.number(*ring_row, "analytic_time_s") == doctest::Approx(call + ring4).epsilon(1e-8));
    CHECK(table.number(*ring_row, "simulated_time_s") == doctest::Approx(call + ring4).epsilon(1e-6));
  }
  auto one = ddlsim::test::ddlsim("collectives --csv -n 1 -m 1MiB --algorithms ring --fidelity analytic");
  const auto one_csv = ddlsim::test::Csv::parse(one.out);
  const auto one_ring = one_csv.find("algorithm", "ring");
  REQUIRE(one_ring.has_value());
  CHECK(one_csv.at(*one_ring, "operation") == "allreduce");
  CHECK(one_csv.at(*one_ring, "resolved").empty());
  CHECK(one_csv.at(*one_ring, "analytic_time_s") == "0");
}

TEST_CASE("--fidelity packet: the ring through ns-3 with jumbo segments is within 3 % of flow and never faster") {
  // 4 ranks, 8 MiB at 25 Gbit/s: every message is 2 MiB, 235 segments of 8,948 bytes, each 54
  // header bytes on the wire (0.6 %); the warm-up run opens the connections, so the timed one pays
  // the headers, one segment's store-and-forward per step at the switch (2.9 us, 0.4 % over 6
  // steps) and TCP's ACK clocking (measured: +2.1 % in all).
  const auto flow = csv("-n 4 -m 8MiB --algorithms ring --fidelity flow");
  const auto packet = csv("-n 4 -m 8MiB --algorithms ring --fidelity packet --packet '{\"segment_bytes\": 8948}'");
  CHECK(packet.at("ring").analytic_s == doctest::Approx(flow.at("ring").analytic_s).epsilon(1e-12));
  CHECK(packet.at("ring").simulated_s > flow.at("ring").simulated_s);
  CHECK(packet.at("ring").simulated_s < flow.at("ring").simulated_s * 1.03);
  // Without the warm-up the first run opens the connections (a round trip each) and starts in
  // slow start: slower.
  const auto cold = csv("-n 4 -m 8MiB --algorithms ring --fidelity packet --warmup 0 --packet '{\"segment_bytes\": 8948}'");
  CHECK(cold.at("ring").simulated_s > packet.at("ring").simulated_s + 2 * 2 * ALPHA);
  check_refused("-n 4 --fidelity flow --packet '{}'", "--packet: only valid with --fidelity packet, not \"flow\"");
  check_refused("-n 4 --fidelity analytic --warmup 1",
                "--warmup: only valid when simulating (--fidelity flow or packet): closed forms have no rounds");
  check_refused("-n 4 --fidelity packet --model tcp",
                "--model: \"tcp\" and \"calibrated\" are flow fidelity's models; at packet fidelity ns-3 sends every "
                "segment and TCP is set in network.packet (\"tcp\", \"segment_bytes\", ...): remove \"model\"");
  check_refused("-n 4 --fidelity packet --packet '{\"queue\": \"red\"}'",
                "--packet/queue: unknown value \"red\"; valid values are: drop_tail, fq_codel");
}
