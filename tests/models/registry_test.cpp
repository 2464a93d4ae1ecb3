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

