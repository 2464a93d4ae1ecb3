#include "models/compressor.hpp"
#include "models/profile.hpp"
#include "models/sync_model.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;

namespace {
struct Widget {
  virtual ~Widget() = default;
  virtual int size() const = 0;
};
struct Small final : Widget {
  explicit Small(int n) : n_(n) {}
  int size() const override { return n_; }
  int n_;
};
}  // namespace

DDLSIM_REGISTER(Widget, "small", "a test widget", [](ObjectReader& p) {
  return std::make_unique<Small>(static_cast<int>(p.integer("n", 3, 1, 10)));
})

TEST_CASE("registry creates by name, validates params, lists valid names") {
  auto& reg = Registry<Widget>::instance();
  CHECK(reg.names() == std::vector<std::string>{"small"});
  CHECK(reg.create("small", json::object(), "/w/name", "/w/params", "widget")->size() == 3);
  CHECK(reg.create("small", json{{"n", 7}}, "/w/name", "/w/params", "widget")->size() == 7);
  CHECK_THROWS_WITH_AS(reg.create("big", json::object(), "/w/name", "/w/params", "widget"),
                       "/w/name: unknown widget \"big\"; valid names are: small", ConfigError);
  CHECK_THROWS_WITH_AS(reg.create("small", json{{"m", 1}}, "/w/name", "/w/params", "widget"),
                       "/w/params/m: unknown key \"m\"; valid keys are: n", ConfigError);
  CHECK_THROWS_WITH_AS(reg.create("small", json{{"n", 11}}, "/w/name", "/w/params", "widget"),
                       "/w/params/n: expected an integer in [1, 10], got 11", ConfigError);
  CHECK_THROWS_WITH_AS(reg.create("small", json::array(), "/w/name", "/w/params", "widget"),
                       "/w/params: expected an object, got an array", ConfigError);
}

TEST_CASE("every expected sync model and compressor is registered") {
  for (const char* name : {"bsp", "asp"}) CHECK(models::SyncModelRegistry::instance().contains(name));
  for (const char* name : {"none"}) CHECK(models::CompressorRegistry::instance().contains(name));
  // What "none" encodes: tests/models/compressors/none_test.cpp.
}

TEST_CASE("profiles: parse, totals and errors") {
  json doc = json::parse(R"({"model": "m", "batch_size": 8, "optimizer_s": "2ms", "io_s": 0.001,
     "layers": [{"name": "a", "forward_s": "1ms", "backward_s": "2ms", "parameters": 10},
                {"name": "b", "forward_s": 0.003, "backward_s": 0.004, "parameters": 5, "grad_bytes": "1KB"}]})");
  auto p = models::parse_profile(doc, "");
  CHECK(p.layers.size() == 2);
  CHECK(p.parameters() == 15);
  CHECK(p.grad_bytes() == 40 + 1000);
  CHECK(p.iteration_compute_s() == doctest::Approx(0.001 + 0.004 + 0.006 + 0.002));
  doc["layers"][1]["forward_s"] = "-1ms";
  CHECK_THROWS_WITH_AS(models::parse_profile(doc, ""), "/layers/1/forward_s: time must not be negative, got \"-1ms\"",
                       ConfigError);
  doc["layers"] = json::array();
  CHECK_THROWS_WITH_AS(models::parse_profile(doc, ""), "/layers: expected at least one layer, got an empty array",
                       ConfigError);
  CHECK_THROWS_WITH_AS(models::load_profile_file("/no/such.json", "/workload/profile"),
                       "/workload/profile: cannot open profile file \"/no/such.json\"", ConfigError);
}
