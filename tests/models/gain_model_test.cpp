// The compression gain model (models/gain_model.cpp): gain(c) = min(1, a c^b) at each checkpoint,
// interpolated linearly in the step between checkpoints and held outside them; read from JSON with
// every refusal at its path, loaded from a file with the scenario's path, and the bundled model
// fitted on real gradients. Expected gains are computed here from the power law.
#include "models/gain_model.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <string>

using namespace ddlsim::models;
using nlohmann::json;

namespace {

json checkpoint(double step, double a, double b) { return json{{"step", step}, {"a", a}, {"b", b}}; }

GainModel gain_model(json checkpoints) {
  return GainModel::read(json{{"source", "test"}, {"checkpoints", std::move(checkpoints)}}, "/g");
}

std::string refused(const json& doc) {
  try {
    (void)GainModel::read(doc, "/g");
  } catch (const ddlsim::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("gain model: the fitted power law, interpolated between checkpoints and held outside") {
  const auto g = gain_model(json::array({checkpoint(0, 2.0, 0.5), checkpoint(100, 3.0, 0.5)}));
  CHECK(g.gain(0.01, 0) == doctest::Approx(2.0 * 0.1).epsilon(1e-15));
  CHECK(g.gain(0.01, -5) == doctest::Approx(0.2).epsilon(1e-15));
  CHECK(g.gain(0.01, 100) == doctest::Approx(0.3).epsilon(1e-15));
  CHECK(g.gain(0.01, 1e6) == doctest::Approx(0.3).epsilon(1e-15));
  CHECK(g.gain(0.01, 25) == doctest::Approx(0.75 * 0.2 + 0.25 * 0.3).epsilon(1e-15));
  CHECK(g.gain(0.5, 0) == 1.0);  // 2 * sqrt(0.5) > 1: a gain is at most 1
}

TEST_CASE("gain model: refusals name the JSON path") {
  CHECK(refused(json{{"checkpoints", json::array({checkpoint(0, 1, 0)})}}) == "/g/source: missing required key");
  CHECK(refused(json{{"source", "x"}, {"checkpoints", json::array()}}) ==
        "/g/checkpoints: expected a non-empty array of checkpoints, got an array");
  CHECK(refused(json{{"source", "x"}, {"checkpoints", json::array({checkpoint(10, 1, 0), checkpoint(10, 1, 0)})}}) ==
        "/g/checkpoints/1/step: checkpoint steps must increase: 10 after 10");
  CHECK(refused(json{{"source", "x"}, {"checkpoints", json::array({checkpoint(0, 1, 11)})}}).rfind("/g/checkpoints/0/b:", 0) == 0);
}

TEST_CASE("bundled gain model: measured on real gradients, fitted within its stated error") {
  const auto doc = ddlsim::read_json_file(DDLSIM_SOURCE_DIR "/scenarios/compression_gain/digits_cnn_topk.json", "gain");
  const auto g = GainModel::read(doc, "");
  REQUIRE(g.checkpoints().size() >= 2);
  for (const auto& cp : g.checkpoints()) {
    REQUIRE(cp.measured.size() == 5);
    const double err = doc["checkpoints"][&cp - g.checkpoints().data()]["max_fit_error"].get<double>();
    for (const auto& [c, measured] : cp.measured) {
      CHECK(g.gain(c, cp.step) == doctest::Approx(measured).epsilon(err + 1e-4));
      CHECK(measured > 0);
      CHECK(measured < 1);
    }
    // Keeping more never loses gain.
    for (std::size_t i = 1; i < cp.measured.size(); ++i) CHECK(cp.measured[i].second < cp.measured[i - 1].second);
  }
}

TEST_CASE("gain model from a JSON text: three checkpoints, the measured pairs kept, a point evaluated by hand") {
  const auto g = GainModel::read(ddlsim::parse_json_text(R"({
    "source": "hand-made", "model": "mlp", "method": "topk",
    "checkpoints": [
      {"step": 10, "a": 0.5, "b": 0.25, "measured": [[0.01, 0.16], [0.0001, 0.05]], "max_fit_error": 0.01},
      {"step": 30, "a": 0.8, "b": 0.5},
      {"step": 50, "a": 4.0, "b": 1.0}]})"), "");
  CHECK(g.source == "hand-made");
  CHECK(g.model == "mlp");
  REQUIRE(g.checkpoints().size() == 3);
  CHECK(g.checkpoints()[0].measured == std::vector<std::pair<double, double>>{{0.01, 0.16}, {0.0001, 0.05}});
  // At ratio 0.04: 0.5 x 0.04^0.25 = 0.5 x sqrt(0.2) at step 10, 0.8 x 0.2 = 0.16 at step 30, 4 x 0.04 = 0.16 at 50.
  const double at10 = 0.5 * std::sqrt(0.2), at30 = 0.16, at50 = 0.16;
  CHECK(g.gain(0.04, 0) == doctest::Approx(at10).epsilon(1e-12));
  CHECK(g.gain(0.04, 10) == doctest::Approx(at10).epsilon(1e-12));
  // Step 15: a quarter of the way from step 10 to step 30.
  CHECK(g.gain(0.04, 15) == doctest::Approx(0.75 * at10 + 0.25 * at30).epsilon(1e-12));
  CHECK(g.gain(0.04, 40) == doctest::Approx(at30).epsilon(1e-12));  // the same on both checkpoints
  CHECK(g.gain(0.04, 1e9) == doctest::Approx(at50).epsilon(1e-12));
  // Ratio 0.5 at step 50: 4 x 0.5 = 2, capped at 1; step 40: halfway between 0.8 sqrt(0.5) and 1.
  CHECK(g.gain(0.5, 50) == 1.0);
  CHECK(g.gain(0.5, 40) == doctest::Approx(0.5 * 0.8 * std::sqrt(0.5) + 0.5).epsilon(1e-12));
}

TEST_CASE("gain model: malformed measurements and unknown keys are refused at their path, a missing file at the scenario's") {
  const auto with = [](json cp) { return json{{"source", "x"}, {"checkpoints", json::array({std::move(cp)})}}; };
  CHECK(refused(with(json{{"step", 0}, {"measured", "all"}})) ==
        "/g/checkpoints/0/measured: expected an array of [ratio, gain], got the string \"all\"");
  CHECK(refused(with(json::parse(R"({"step": 0, "measured": [[0.1, 0.2, 0.3]]})"))) == "/g/checkpoints/0/measured/0: expected [ratio, gain]");
  CHECK(refused(with(json::parse(R"({"step": 0, "measured": [[0.1, 1.5]]})"))) ==
        "/g/checkpoints/0/measured/0/1: expected a number in [0, 1], got 1.5");
  CHECK(refused(with(json{{"step", 0}, {"c", 1}})) ==
        "/g/checkpoints/0/c: unknown key \"c\"; valid keys are: a, b, max_fit_error, measured, step");
  CHECK(refused(with(json{{"a", 0}})) == "/g/checkpoints/0/a: expected a number in [2.2250738585072014e-308, 1000000], got 0");
  CHECK(refused(json{{"source", "x"}, {"checkpoints", json::array({checkpoint(5, 1, 0), checkpoint(2, 1, 0)})}}) ==
        "/g/checkpoints/1/step: checkpoint steps must increase: 2 after 5");
  CHECK(refused(json{{"source", "x"}, {"checkpoints", json::array({checkpoint(0, 1, 0)})}, {"fit", 1}}) ==
        "/g/fit: unknown key \"fit\"; valid keys are: checkpoints, curve, measured_on, method, model, source");
  CHECK_THROWS_WITH_AS(GainModel::load("/no/such/gain.json", "/compression/params/gain_model"),
                       "/compression/params/gain_model: cannot open gain model file \"/no/such/gain.json\"",
                       ddlsim::ConfigError);
}
