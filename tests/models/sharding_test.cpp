// Sharded data parallelism's closed forms (models/sharding.cpp): the memory per rank of ZeRO's stages
// against the paper's own worked example (Rajbhandari et al. 2020, Figure 1), the bytes sent per rank
// against section 7's volumes (2 Psi for stages 0 to 2, 3 Psi for stage 3), FSDP's hybrid sharding
// derived here from its shard and replica groups, the gathered units' peak with and without prefetch,
// and every refusal's message. Every expected number is computed in the test from the formulas.
#include "models/sharding.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <stdexcept>
#include <string>

using namespace ddlsim::models;

namespace {

std::string sharding_refusal(const Sharding& s) {
  try {
    check_sharding(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

/// `bytes` in GB (1e9) rounded to one decimal, as the paper's Figure 1 prints them.
double gb_one_decimal(double bytes) { return std::round(bytes / 1e8) / 10; }

}  // namespace

TEST_CASE("sharding: ZeRO's Figure 1, 7.5 B parameters on 64 ranks with mixed-precision Adam") {
  const double psi = 7.5e9;
  const int n = 64;
  const StateBytes adam;  // 2 + 2 + 12 bytes per parameter
  CHECK(adam.parameter_bytes + adam.gradient_bytes + adam.optimizer_bytes == 16);
  const double k = 12;
  const double expected[4] = {(2 + 2 + k) * psi, 2 * psi + 2 * psi + k * psi / n, 2 * psi + (2 + k) * psi / n,
                              (2 + 2 + k) * psi / n};
  const double printed[4] = {120, 31.4, 16.6, 1.9};  // GB, as the paper prints them
  for (int stage = 0; stage <= 3; ++stage) {
    CAPTURE(stage);
    const RankMemory m = rank_memory(psi, {stage, n, n}, adam);
    CHECK(m.total_bytes() == doctest::Approx(expected[stage]).epsilon(1e-12));
    CHECK(gb_one_decimal(m.total_bytes()) == doctest::Approx(printed[stage]));
  }
  // What each stage shards: stage 1 the optimizer state, stage 2 the gradients too, stage 3 everything.
  const RankMemory s1 = rank_memory(psi, {1, n, n});
  CHECK(s1.parameters_bytes == 2 * psi);
  CHECK(s1.gradients_bytes == 2 * psi);
  CHECK(s1.optimizer_bytes == doctest::Approx(k * psi / n));
  const RankMemory s2 = rank_memory(psi, {2, n, n});
  CHECK(s2.parameters_bytes == 2 * psi);
  CHECK(s2.gradients_bytes == doctest::Approx(2 * psi / n));
  const RankMemory s3 = rank_memory(psi, {3, n, n});
  CHECK(s3.parameters_bytes == doctest::Approx(2 * psi / n));
}

TEST_CASE("sharding: bytes sent per rank, 2 Psi for data parallelism and stages 1 and 2, 3 Psi for stage 3") {
  const double psi = 124'439'808;  // GPT-2 small
  for (int n : {2, 8, 64}) {
    CAPTURE(n);
    const double share = static_cast<double>(n - 1) / n;
    const RankTraffic ddp = rank_traffic(psi, {0, n, n});
    CHECK(ddp.all_reduce_bytes == doctest::Approx(2 * psi * 2 * share));
    CHECK(ddp.all_gather_bytes == 0);
    CHECK(ddp.reduce_scatter_bytes == 0);
    for (int stage : {1, 2}) {
      const RankTraffic t = rank_traffic(psi, {stage, n, n});
      CHECK(t.reduce_scatter_bytes == doctest::Approx(psi * 2 * share));
      CHECK(t.all_gather_bytes == doctest::Approx(psi * 2 * share));
      CHECK(t.all_reduce_bytes == 0);
      CHECK(t.total_bytes() == doctest::Approx(ddp.total_bytes()));  // "no additional communication" (section 7.2.1)
    }
    const RankTraffic z3 = rank_traffic(psi, {3, n, n});
    CHECK(z3.all_gather_bytes == doctest::Approx(2 * psi * 2 * share));  // forward and backward
    CHECK(z3.reduce_scatter_bytes == doctest::Approx(psi * 2 * share));
    CHECK(z3.total_bytes() / ddp.total_bytes() == doctest::Approx(1.5));  // section 7.2.2
  }
  // The all-gathers carry parameters and the reductions gradients: fp32 parameters with fp16 gradients.
  const StateBytes fp32_params{4, 2, 12};
  const RankTraffic mixed = rank_traffic(psi, {3, 4, 4}, fp32_params);
  CHECK(mixed.all_gather_bytes == doctest::Approx(2 * psi * 4 * 0.75));
  CHECK(mixed.reduce_scatter_bytes == doctest::Approx(psi * 2 * 0.75));
  // One rank sends nothing.
  CHECK(rank_traffic(psi, {3, 1, 1}).total_bytes() == 0);
  CHECK(rank_traffic(psi, {0, 1, 1}).total_bytes() == 0);
}

TEST_CASE("sharding: FSDP's hybrid sharding shards inside a group of S ranks and all-reduces the shards across N / S") {
  const double psi = 1e9;
  const int n = 16, s = 8;  // two nodes of eight
  const RankTraffic t = rank_traffic(psi, {3, n, s});
  CHECK(t.all_gather_bytes == doctest::Approx(2 * psi * 2 * 7.0 / 8));
  CHECK(t.reduce_scatter_bytes == doctest::Approx(psi * 2 * 7.0 / 8));
  CHECK(t.all_reduce_bytes == doctest::Approx(2 * (psi / 8) * 2 * 1.0 / 2));
  const RankMemory m = rank_memory(psi, {3, n, s});
  CHECK(m.total_bytes() == doctest::Approx(16 * psi / s));  // sharded over the node, not the 16 ranks
  // SHARD_GRAD_OP in hybrid form gathers the parameters once.
  CHECK(rank_traffic(psi, {2, n, s}).all_gather_bytes == doctest::Approx(psi * 2 * 7.0 / 8));
  // A shard group of one rank is plain data parallelism: the same bytes and the same memory.
  for (int stage : {1, 2, 3}) {
    CAPTURE(stage);
    const RankTraffic one = rank_traffic(psi, {stage, n, 1});
    CHECK(one.all_gather_bytes == 0);
    CHECK(one.reduce_scatter_bytes == 0);
    CHECK(one.all_reduce_bytes == doctest::Approx(rank_traffic(psi, {0, n, n}).all_reduce_bytes));
    CHECK(rank_memory(psi, {stage, n, 1}).total_bytes() == doctest::Approx(16 * psi));
  }
  // A shard group of all the ranks is the plain stage: nothing left to all-reduce.
  CHECK(rank_traffic(psi, {3, n, n}).all_reduce_bytes == 0);
}

TEST_CASE("sharding: the gathered units' peak is the largest unit, or with prefetch the largest two in a row") {
  const std::vector<double> units = {1e6, 3e6, 2e6, 5e6, 1e6};
  CHECK(peak_gathered_bytes(units, false) == 5e6 * 2);
  CHECK(peak_gathered_bytes(units, true) == (2e6 + 5e6) * 2);
  CHECK(peak_gathered_bytes({4e6}, true) == 4e6 * 2);
  CHECK(peak_gathered_bytes({}, true) == 0);
  CHECK(peak_gathered_bytes(units, false, StateBytes{4, 4, 8}) == 5e6 * 4);
}

TEST_CASE("sharding: refusals name the field and the valid values") {
  CHECK(sharding_refusal(Sharding{4, 8, 8}) == "stage: expected 0, 1, 2 or 3, got 4");
  CHECK(sharding_refusal(Sharding{-1, 8, 8}) == "stage: expected 0, 1, 2 or 3, got -1");
  CHECK(sharding_refusal(Sharding{3, 0, 1}) == "ranks: expected at least 1, got 0");
  CHECK(sharding_refusal(Sharding{3, 8, 3}) == "shard_ranks: expected a divisor of the 8 ranks, got 3");
  CHECK(sharding_refusal(Sharding{3, 8, 16}) == "shard_ranks: expected a divisor of the 8 ranks, got 16");
  CHECK(sharding_refusal(Sharding{3, 8, 0}) == "shard_ranks: expected a divisor of the 8 ranks, got 0");
  CHECK(sharding_refusal(Sharding{0, 8, 4}) == "shard_ranks: stage 0 shards nothing, so it has no shard group of 4 ranks; use stage 1, 2 or 3");
  CHECK(sharding_refusal(Sharding{3, 8, 4}) == "accepted");
  CHECK_THROWS_AS((void)rank_memory(1e6, {3, 8, 3}), std::invalid_argument);
  CHECK_THROWS_AS((void)rank_traffic(1e6, {5, 8, 8}), std::invalid_argument);
}
