// The decision rules of the event-driven models on hand-made sequences (models/trigger_rules.cpp),
// each expectation derived here from the rule as its source states it (models/trigger_rules.hpp);
// the training-trace loader's checks are in training_trace_test.cpp.
#include "models/error.hpp"
#include "models/sync_model.hpp"
#include "models/training_trace.hpp"
#include "models/trigger_rules.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <vector>

using namespace ddlsim::models;
using nlohmann::json;

TEST_CASE("event trigger, adaptive: the thresholds are the mean of the last two slopes, times horizon every pass") {
  const double h = 0.5;
  EventTriggerSettings s;
  s.adaptive = true;
  s.horizon = h;
  s.initial_comm_passes = 2;  // pass 1 always sends
  EventTrigger trig(s);
  // pass:   1    2     3     4    5     6
  const std::vector<double> norms{1.0, 1.05, 1.5, 1.6, 1.61, 3.0};
  // Pass 1: thres = 0 * h = 0; sends (initial); slope (1.0 - 0) / (1 - 0) = 1.0; thres = (0 + 1.0) / 2 = 0.5.
  CHECK(trig.step(1, norms[0]));
  CHECK(trig.threshold() == 0.5);
  // Pass 2: thres = 0.5 * h = 0.25; diff 0.05 < 0.25: no send, threshold stays 0.25.
  CHECK_FALSE(trig.step(2, norms[1]));
  CHECK(trig.threshold() == 0.25);
  // Pass 3: thres = 0.125; diff 0.5 >= 0.125: send; slopes [1.0, 0.5 / (3 - 1)] -> thres = (1.0 + 0.25) / 2.
  CHECK(trig.step(3, norms[2]));
  CHECK(trig.threshold() == doctest::Approx((1.0 + 0.5 / 2) / 2).epsilon(1e-15));
  // Pass 4: thres = 0.625 * 0.5 = 0.3125; diff 0.1: no.
  CHECK_FALSE(trig.step(4, norms[3]));
  CHECK(trig.threshold() == doctest::Approx(0.3125).epsilon(1e-15));
  // Pass 5: thres = 0.15625; diff |1.61 - 1.5| = 0.11: no.
  CHECK_FALSE(trig.step(5, norms[4]));
  // Pass 6: thres = 0.078125; diff 1.5: send; slopes [0.25, 1.5 / 3] -> thres 0.375.
  CHECK(trig.step(6, norms[5]));
  CHECK(trig.threshold() == doctest::Approx((0.25 + 1.5 / 3) / 2).epsilon(1e-15));
}

TEST_CASE("event trigger: horizon 0 and constant 0 send every pass, a threshold above every change only the initial passes") {
  const std::vector<double> norms{1.0, 1.0, 1.2, 1.3, 1.3, 0.9, 5.0};
  EventTriggerSettings zero_horizon;
  zero_horizon.horizon = 0;
  zero_horizon.initial_comm_passes = 0;
  EventTriggerSettings zero_constant;
  zero_constant.adaptive = false;
  zero_constant.value = 0;
  zero_constant.initial_comm_passes = 0;
  EventTriggerSettings high;
  high.adaptive = false;
  high.value = 100;  // above |5.0 - anything| here
  high.initial_comm_passes = 3;
  EventTrigger a(zero_horizon), b(zero_constant), c(high);
  for (std::size_t k = 0; k < norms.size(); ++k) {
    const int pass = static_cast<int>(k) + 1;
    CHECK(a.step(pass, norms[k]));
    CHECK(b.step(pass, norms[k]));
    CHECK(c.step(pass, norms[k]) == (pass < 3));
  }
}

TEST_CASE("ordered selection: the m largest norms, ties to the lower rank") {
  CHECK(ordered_selection({3, 1, 2, 5}, 2) == std::vector<char>{1, 0, 0, 1});
  CHECK(ordered_selection({1, 2, 2, 2}, 2) == std::vector<char>{0, 1, 1, 0});
  CHECK(ordered_selection({1, 2, 3}, 3) == std::vector<char>{1, 1, 1});
  CHECK(total_norm(std::vector<double>{3, 4}.data(), 2) == 5.0);
}

TEST_CASE("selsync trigger: the first iteration flags, then a relative change of delta or more") {
  SelSyncTrigger t(0.1);
  CHECK(t.step(10));        // first
  CHECK_FALSE(t.step(10.5)); // 5 %
  CHECK(t.step(12));        // |12 - 10.5| / 10.5 = 14 %
  CHECK(t.step(10.7));      // |10.7 - 12| / 12 = 10.8 %
  SelSyncTrigger zero(0);
  for (double g : {1.0, 1.0, 2.0, 2.0}) CHECK(zero.step(g));
}
