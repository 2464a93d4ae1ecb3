// Test helper: building plugins by name as a scenario would (with the scenario's JSON paths), and
// the small workloads the plugin tests in tests/models/{sync,compressors}/ share.
#pragma once

#include "models/compressor.hpp"
#include "models/error.hpp"
#include "models/sync_model.hpp"
#include "tests/models/fake_runtime.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unistd.h>
#include <string>
#include <vector>

namespace ddlsim::test {

// ---------------------------------------------------------------- compressors

inline std::unique_ptr<models::Compressor> make_compressor(const std::string& name,
                                                           const nlohmann::json& params = nlohmann::json::object()) {
  return models::CompressorRegistry::instance().create(name, params, "/training/compressor/name",
                                                       "/training/compressor/params", "compressor");
}

/// Dense fp32 bucket sizes in bytes: one element, a few KB, the 25 MB, odd and large ones.
inline constexpr double COMPRESSOR_SIZES[] = {4.0, 1024.0, 25e6, 100e6 + 4, 528e6};

/// The ConfigError message building `name` with `params` gives, or "accepted".
inline std::string compressor_refusal(const std::string& name, const nlohmann::json& params) {
  try {
    (void)make_compressor(name, params);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

/// A top-k sparsifier (topk, lwtopk, mstopk, dgc): k = max(1, ceil(ratio n)) fp32 values plus k
/// int32 indices, gathered, for several ratios and every size of COMPRESSOR_SIZES.
inline void check_topk_family(const std::string& name) {
  for (double ratio : {0.1, 0.01, 0.001}) {
    const auto c = make_compressor(name, {{"ratio", ratio}});
    for (double bytes : COMPRESSOR_SIZES) {
      CAPTURE(name);
      CAPTURE(bytes);
      const double k = std::max(1.0, std::ceil(ratio * bytes / 4 - 1e-6));
      const auto e = c->encode(bytes);
      CHECK(e.kept_elements == k);
      CHECK(e.wire_bytes == 8 * k);
      CHECK(e.index_bytes == 4 * k);
      CHECK(e.aggregation == models::Aggregation::GATHER);
    }
  }
}

// ---------------------------------------------------------------- sync models

inline std::unique_ptr<models::SyncModel> make_sync(const std::string& name,
                                                    const nlohmann::json& params = nlohmann::json::object()) {
  return models::SyncModelRegistry::instance().create(name, params, "/training/sync/name", "/training/sync/params",
                                                      "sync model");
}

/// Two layers of 100 and 50 gradient bytes; buckets of 100 bytes: {layer 1}, {layer 0}.
struct TwoLayers {
  models::Profile profile;
  models::TrainingPlan plan;
  explicit TwoLayers(int iterations) {
    profile.layers = {models::Layer{"l0", 1e-3, 2e-3, 25, 100}, models::Layer{"l1", 1e-3, 2e-3, 12, 50}};
    profile.optimizer_s = 1e-3;
    plan = models::TrainingPlan{&profile, iterations, models::make_buckets(profile, 100), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};
  }
};

/// The iterations in which `rt` logged an entry starting with `prefix`.
inline std::vector<int> iterations_with(const FakeRuntime& rt, const std::string& prefix) {
  std::vector<int> out;
  int it = -1;
  for (const auto& l : rt.log) {
    if (l.rfind("begin:", 0) == 0) it = std::stoi(l.substr(6));
    if (l.rfind(prefix, 0) == 0 && (out.empty() || out.back() != it)) out.push_back(it);
  }
  return out;
}

/// The log entries of iteration `it`, from "begin:it" to "end:it".
inline std::vector<std::string> iteration_log(const FakeRuntime& rt, int it) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : rt.log) {
    if (l == "begin:" + std::to_string(it)) in = true;
    if (in) out.push_back(l);
    if (l == "end:" + std::to_string(it)) break;
  }
  return out;
}

/// Writes `doc` to a file of its own in the temporary folder (one per process: ctest runs test
/// cases in parallel) and returns its path, for a sync model's "trace" param.
inline std::string write_trace(const std::string& stem, const nlohmann::json& doc) {
  const auto path = std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << doc.dump();
  return path.string();
}

/// A binding for `workers` workers and `iterations` iterations of `profile`.
inline models::SyncBinding binding(int workers, int iterations, const models::Profile& profile, std::uint64_t seed = 1) {
  models::SyncBinding b;
  b.workers = workers;
  b.iterations = iterations;
  b.seed = seed;
  b.profile = &profile;
  return b;
}

}  // namespace ddlsim::test
