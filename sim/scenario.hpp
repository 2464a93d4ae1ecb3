// ddlsim: the scenario loader. JSON in, validated plain structs out.
//
// Everything is checked before any engine starts: types, units, ranges,
// unknown keys, registry names, profile files and the topology itself (built
// here, so an impossible or disconnected topology fails at validation). Every
// error is a ConfigError naming the JSON path. docs/scenario.md is the
// reference for every field, its unit and its default.
#pragma once

#include "models/collective.hpp"
#include "models/compressor.hpp"
#include "models/json_reader.hpp"
#include "models/profile.hpp"
#include "models/sync_model.hpp"
#include "platforms/topology.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ddlsim::sim {

enum class Fidelity { ANALYTIC, FLOW };
enum class NetworkModel { IDEAL, TCP, CALIBRATED };
enum class Granularity { STEPWISE, PIPELINED };
std::string to_string(Fidelity f);
std::string to_string(NetworkModel m);
std::string to_string(Granularity g);

struct PlatformSpec {
  std::string topology = "star";
  int workers = 8;
  int parameter_servers = 0;
  platforms::LinkSpec link;
  platforms::Topology graph;  // built and checked at load time
};

struct NetworkSpec {
  Fidelity fidelity = Fidelity::FLOW;
  NetworkModel model = NetworkModel::IDEAL;
  Granularity granularity = Granularity::STEPWISE;
  double latency_factor = 1.0;    // calibrated model only
  double bandwidth_factor = 1.0;  // calibrated model only
};

struct WorkloadSpec {
  models::Profile profile;
  std::string profile_file;  // empty for a synthetic workload
  int iterations = 10;
  std::int64_t batch_size = 32;  // samples per worker per iteration
};

struct Plugin {
  std::string name;
  json params = json::object();
};

struct TrainingSpec {
  Plugin sync{"bsp"};
  Plugin collective{"ring"};
  Plugin compressor{"none"};
  std::shared_ptr<const models::SyncModel> sync_model;
  std::shared_ptr<const models::Collective> collective_algorithm;
  std::shared_ptr<const models::Compressor> compressor_model;
};

struct OutputSpec {
  std::string dir;  // default "out/<name>"
};

struct Scenario {
  std::string name = "scenario";
  std::string description;
  std::uint64_t seed = 1;
  PlatformSpec platform;
  NetworkSpec network;
  WorkloadSpec workload;
  TrainingSpec training;
  OutputSpec output;
  json document;  // the scenario as given, after --set overrides
};

/// Reads a scenario file as JSON. Malformed JSON -> ConfigError("", "<file>: malformed JSON at line L, column C: ...").
json read_json_file(const std::string& file);

/// Applies one "--set path=value" override to `doc`. `path` is dotted
/// (platform.link.bandwidth) or a JSON pointer (/platform/link/bandwidth);
/// `value` is parsed as JSON, and taken as a string if it is not valid JSON.
void apply_override(json& doc, const std::string& assignment);

/// Validates a scenario document. `base_dir` resolves relative profile paths.
Scenario parse_scenario(const json& doc, const std::string& base_dir);

/// read_json_file + apply_override for each + parse_scenario.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides);

}  // namespace ddlsim::sim
