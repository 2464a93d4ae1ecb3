#include "scenario/convergence_spec.hpp"
#include "scenario/scenario.hpp"

#include "scenario/run_plan.hpp"

#include "scenario/output_limits.hpp"
#include "scenario/sections.hpp"
#include "models/units.hpp"

#include <boost/graph/graph_traits.hpp>
#include <filesystem>
#include <set>
#include <fmt/format.h>
#include <limits>
#include <optional>

namespace ddlsim::sim {
namespace {

/// The longest scenario name: it names the default output directory (NAME_MAX bytes).
// The default output directory is out/<name>: its name must leave room for the staging folder.
constexpr std::size_t MAX_NAME_BYTES = MAX_DIR_NAME_BYTES;

/// The scenario's name, fit to name a directory (out/<name>).
std::string read_name(ObjectReader& root) {
  const std::string name = root.string("name", "scenario");
  const bool control = std::any_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
  });
  if (name.empty() || name == "." || name == ".." || name.size() > MAX_NAME_BYTES || control ||
      name.find_first_of("/\\") != std::string::npos)
    throw ConfigError("/name", fmt::format("expected a name for the output directory: 1 to {} bytes, no slash, "
                                           "backslash or control character, not \".\" or \"..\"; got \"{}\"",
                                           MAX_NAME_BYTES, excerpt(name)));
  return name;
}

Plugin read_plugin(ObjectReader& training, const std::string& key, const std::string& default_name) {
  ObjectReader r = training.object(key);
  Plugin p;
  p.name = r.string("name", default_name);
  if (const json* params = r.find("params")) p.params = *params;
  r.finish();
  return p;
}

template <class Interface>
std::shared_ptr<const Interface> create_plugin(const Plugin& plugin, const std::string& section, const std::string& kind) {
  return Registry<Interface>::instance().create(plugin.name, plugin.params, section + "/name", section + "/params", kind);
}



}  // namespace

std::string resolve_beside(const std::string& file, const std::string& base_dir) {
  namespace fs = std::filesystem;
  fs::path p(file);
  if (p.is_absolute() || base_dir.empty()) return file;
  fs::path beside = fs::path(base_dir) / p;
  std::error_code ec;  // a name the file system refuses (too long, say) is not there: opening it says so
  if (fs::exists(beside, ec)) return beside.string();
  return file;
}

std::string to_string(Fidelity f) { return f == Fidelity::ANALYTIC ? "analytic" : f == Fidelity::FLOW ? "flow" : "packet"; }
std::string to_string(NetworkModel m) {
  switch (m) {
    case NetworkModel::IDEAL: return "ideal";
    case NetworkModel::TCP: return "tcp";
    case NetworkModel::CALIBRATED: return "calibrated";
  }
  return "?";
}
std::string to_string(Granularity g) { return g == Granularity::STEPWISE ? "stepwise" : "pipelined"; }

namespace {


/// "network" (a calibration merged in first): fidelity, model, granularity, link traces, software.
void read_network(ObjectReader& root, Scenario& s, const std::string& base_dir) {
  const CalibratedNetwork calibration = apply_calibration(root.find("network"), base_dir);
  s.network.calibration_file = calibration.file;
  s.network.calibration_range = calibration.range;
  try {
    ObjectReader n(calibration.network, "/network");
    std::string fidelity = n.choice("fidelity", {"analytic", "flow", "packet"}, "flow");
    s.network.fidelity = fidelity == "analytic" ? Fidelity::ANALYTIC : fidelity == "flow" ? Fidelity::FLOW : Fidelity::PACKET;
    if (s.network.fidelity == Fidelity::PACKET) {
      s.network.packet = read_packet_settings(n.object("packet"));
    } else if (n.raw().contains("packet")) {
      throw ConfigError(n.path_of("packet"), fmt::format("only valid with \"fidelity\": \"packet\", not \"{}\"", fidelity));
    }
    std::string model = n.choice("model", {"ideal", "tcp", "calibrated"}, "ideal");
    s.network.model = model == "ideal" ? NetworkModel::IDEAL : model == "tcp" ? NetworkModel::TCP : NetworkModel::CALIBRATED;
    s.network.granularity =
        n.choice("collective_granularity", {"stepwise", "pipelined"}, "stepwise") == "stepwise" ? Granularity::STEPWISE
                                                                                                : Granularity::PIPELINED;
    s.network.push_pull_simgrid = n.choice("push_pull_solver", {"auto", "simgrid"}, "auto") == "simgrid";
    if (const json* traces = n.find("link_traces")) s.network.link_traces = read_link_traces(*traces, n.path_of("link_traces"), s.platform.graph);
    for (const auto& trace : s.network.link_traces)
      if (s.network.model == NetworkModel::TCP && !trace.bandwidth_Bps.empty())  // engine/flow_bounds.hpp
        throw ConfigError(n.path_of("link_traces"),
                          "bandwidth traces with network.model \"tcp\": SimGrid's LV08 bounds each flow by its TCP "
                          "window from the latency at its start and by the route's bandwidth at its start, which a "
                          "later bandwidth change does not lift; use \"ideal\" or \"calibrated\"");
    if (s.network.model == NetworkModel::CALIBRATED) {
      s.network.latency_factor = n.number("latency_factor", 1.0, MIN_MODEL_FACTOR, MAX_MODEL_FACTOR);
      s.network.bandwidth_factor = n.number("bandwidth_factor", 1.0, MIN_MODEL_FACTOR, MAX_MODEL_FACTOR);
      check_bandwidth_factor(s.network.bandwidth_factor, n.path_of("bandwidth_factor"));
    } else {
      for (const char* key : {"latency_factor", "bandwidth_factor"})
        if (n.raw().contains(key))
          throw ConfigError(n.path_of(key), fmt::format("only valid with \"model\": \"calibrated\", not \"{}\"", model));
    }
    std::optional<double> preset_call_s;
    if (const json* sw = n.find("software")) {
      auto software = models::read_software(*sw, n.path_of("software"));
      preset_call_s = software.call_cost_s;
      s.network.software = std::make_shared<const models::SoftwareCost>(std::move(software));
    }
    s.network.collective_call_given = n.has("collective_call_cost");
    s.network.collective_call_s = n.time_s("collective_call_cost", preset_call_s.value_or(10e-6));
    if (s.network.collective_call_s > MAX_CALL_COST_S)
      throw ConfigError(n.path_of("collective_call_cost"), call_cost_range_message(s.network.collective_call_s));
    n.finish();
  } catch (const ConfigError& e) {
    throw calibration_error(e, calibration);
  }
}

/// "workload": the profile (or synthetic one) at the batch size, iterations, compute costs. Returns
/// the path of a synthetic workload's batch_scaling (empty: none), checked once the model is known.
std::string read_workload(ObjectReader& root, Scenario& s, const std::string& base_dir) {
  std::string synthetic_scaling;
  ObjectReader w = root.object("workload");
  for (const char* key : {"profile", "synthetic"})
    if (const json* v = w.find(key); v != nullptr && v->is_null())
      throw ConfigError(w.path_of(key), fmt::format("expected {}, got null (give \"profile\" or \"synthetic\")",
                                                    key == std::string("profile") ? "a profile file name" : "an object"));
  const bool has_profile = w.has("profile");
  const bool has_synthetic = w.has("synthetic");
  if (has_profile == has_synthetic)
    throw ConfigError("/workload", has_profile ? "give either \"profile\" or \"synthetic\", not both"
                                               : "missing workload: give \"profile\" (a profile file) or \"synthetic\"" +
                                                     w.misspelling_hint("profile") + w.misspelling_hint("synthetic"));
  if (has_profile) {
    const std::string profile = w.required_string("profile");
    if (profile.empty())
      throw ConfigError(w.path_of("profile"), "expected the file name of a profile (docs/profiles.md; e.g. "
                                              "\"profiles/resnet50.json\"), got an empty string");
    s.workload.profile_file = resolve_beside(profile, base_dir);
    s.workload.profile = models::load_profile_file(s.workload.profile_file, "/workload/profile");
  } else {
    ObjectReader syn = w.object("synthetic");
    s.workload.profile = models::synthetic_profile(syn);
    syn.finish();
  }
  s.workload.iterations = static_cast<int>(w.integer("iterations", 10, 1, 1'000'000));
  s.workload.batch_size = w.integer("batch_size", s.workload.profile.batch_size, 1, std::numeric_limits<std::int64_t>::max());
  const bool linear = w.choice("batch_scaling", {"none", "linear"}, "none") == "linear";
  // A synthetic workload's times are given at batch_size: scaling applies only to another batch
  // a sync model computes (crossbow's k x batch_size), checked once the model is known.
  if (!has_profile && w.has("batch_scaling")) synthetic_scaling = w.path_of("batch_scaling");
  s.workload.batch_extrapolation = linear;
  if (has_profile) {
    s.workload.batch_scaled = !s.workload.profile.covers(s.workload.batch_size);
    s.workload.profile = s.workload.profile.at_batch(s.workload.batch_size, linear, w.path_of("batch_size"));
  }
  s.workload.profile.batch_size = s.workload.batch_size;
  read_compute_costs(w, s);
  w.finish();
  return synthetic_scaling;
}

/// "training": the sync model (bound to its traces), collective and compressor, bucketing,
/// stragglers, compression costs and adaptive compression, and every combination checked.
void read_training(ObjectReader& root, Scenario& s, const std::string& base_dir, const std::string& synthetic_scaling,
                   bool collective_given) {
  ObjectReader t = root.object("training");
  s.training.sync = read_plugin(t, "sync", "bsp");
  s.training.collective = read_plugin(t, "collective", "ring");
  s.training.compressor = read_plugin(t, "compressor", "none");
  {
    ObjectReader b = t.object("bucketing");
    s.training.bucketing = read_bucketing(b);  // scenario/scenario_bucketing.cpp
    s.training.bucketing.copy_bandwidth_Bps = b.bandwidth_Bps("copy_bandwidth", 0);  // absent: no copies
    b.finish();
  }
  {
    ObjectReader sh = t.object("sharding");
    s.training.sharding = read_sharding(sh, s);  // scenario/scenario_sharding.cpp
    sh.finish();
  }
  {
    ObjectReader st = t.object("stragglers");
    s.training.stragglers = read_stragglers(st, s.platform.workers);
    st.finish();
  }
  read_compression_cost(t, s, base_dir);
  read_adaptive_compression(t, s, base_dir);
  const json* convergence = t.find("convergence");  // read once the sync model and compressor exist
  if (convergence != nullptr && convergence->is_null())
    throw ConfigError("/training/convergence", "expected an object, got null (leave it out for no co-simulation)");
  t.finish();
  models::SyncModel* sync_model = nullptr;  // the same object, for live decisions once convergence is read
  {
    auto sync = models::SyncModelRegistry::instance().create(s.training.sync.name, s.training.sync.params,
                                                             "/training/sync/name", "/training/sync/params", "sync model");
    models::SyncBinding binding;
    binding.workers = s.platform.workers;
    binding.iterations = s.workload.iterations;
    binding.seed = s.seed;
    binding.profile = &s.workload.profile;
    binding.resolve = [&base_dir](const std::string& f) { return resolve_beside(f, base_dir); };
    sync->bind(binding);
    sync_model = sync.get();
    s.training.sync_model = std::move(sync);
  }
  // What each worker computes per iteration (crossbow: its learners' batches as one).
  s.workload.worker = s.training.sync_model->worker_workload(s.workload.profile, s.workload.batch_size,
                                                             s.workload.batch_extrapolation);
  if (!synthetic_scaling.empty() &&
      (!s.workload.batch_extrapolation || s.workload.worker.profile.batch_size == s.workload.batch_size))
    throw ConfigError(synthetic_scaling,
                      "only with a \"profile\", or \"linear\" where the sync model computes another batch than "
                      "batch_size (crossbow with learners_per_gpu > 1: its k x batch_size, scaled per sample): a "
                      "synthetic workload's times are given per batch_size");
  s.training.graph = s.training.sync_model->logical_graph(s.platform.workers, s.seed);  // ConfigError if N cannot form it
  s.training.collective_algorithm =
      create_plugin<models::Collective>(s.training.collective, "/training/collective", "collective");
  s.training.compressor_model =
      create_plugin<models::Compressor>(s.training.compressor, "/training/compressor", "compressor");
  if (s.training.sync_model->traits().uses_servers && s.platform.parameter_servers < 1)
    throw ConfigError("/platform/parameter_servers",
                      fmt::format("sync model \"{}\" with these params needs at least 1 parameter server, got 0",
                                  s.training.sync.name));
  check_compression(s);  // may replace "auto" by the all-gather a gathering compressor needs
  const auto& coll = *s.training.collective_algorithm;
  const bool gathering = s.training.compressor_model->aggregation() != models::Aggregation::SUM;
  if (!gathering && coll.operation() != "allreduce")
    throw ConfigError("/training/collective/name",
                      fmt::format("\"{}\" is a {} algorithm; gradient aggregation needs an all-reduce",
                                  s.training.collective.name, coll.operation()));
  try {  // parameters that depend on the group (e.g. torus2d rows must divide N; hierarchical's
         // gpus_per_node must match the platform's, a ConfigError at its own path)
    models::CollectiveGroup group(s.platform.workers, s.platform.parameter_servers);
    group.ranks_per_node = s.platform.graph.gpus_per_node;
    (void)coll.analytic_time_s(group, 1.0, models::AlphaBeta{1e-6, 1e-9});
  } catch (const std::invalid_argument& e) {
    if (!coll.uses_servers() || s.platform.parameter_servers > 0)
      throw ConfigError("/training/collective/params", e.what());
  }
  if (coll.uses_servers() && s.platform.parameter_servers < 1)
    throw ConfigError("/platform/parameter_servers",
                      fmt::format("collective \"{}\" needs at least 1 parameter server, got 0", s.training.collective.name));
  check_combination(s, collective_given);
  s.training.convergence = read_convergence(convergence, s);
  if (s.training.convergence && !s.training.convergence->decisions.empty()) sync_model->set_live_decisions(s.training.convergence->decisions);
}

/// "output": the directory and which files are written.
void read_output(ObjectReader& root, Scenario& s) {
  ObjectReader o = root.object("output");
  s.output.dir = o.string("dir", "out/" + s.name);
  if (s.output.dir.empty()) throw ConfigError("/output/dir", "expected a non-empty directory name");
  s.output.iterations_csv = o.boolean("iterations_csv", true);
  s.output.timeline = o.boolean("timeline", true);
  s.output.timeline_workers = static_cast<int>(o.integer("timeline_workers", 8, 0, MAX_WORKERS));
  s.output.timeline_iterations = static_cast<int>(o.integer("timeline_iterations", 3, 0, 1'000'000));
  o.finish();
}

}  // namespace

Scenario parse_scenario(const json& doc, const std::string& base_dir) {
  Scenario s;
  s.document = doc;
  ObjectReader root(doc, "");
  // A section given as null is refused like any other non-object (leave it out for its defaults);
  // network and sweep are read through find(), which would take null for an absent section.
  for (const char* section : {"platform", "network", "workload", "training", "output", "sweep"})
    if (const auto it = doc.find(section); it != doc.end() && it->is_null())
      throw ConfigError(pointer_append("", section), "expected an object, got null");
  s.name = read_name(root);
  s.description = root.string("description", "");
  s.seed = static_cast<std::uint64_t>(root.integer("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
  check_sweep_section(root.find("sweep"));  // the grid of analysis/sweep.py: checked, not run

  read_platform(root, s);
  read_network(root, s, base_dir);
  const std::string synthetic_scaling = read_workload(root, s, base_dir);
  read_training(root, s, base_dir, synthetic_scaling,
                doc.contains("training") && doc["training"].is_object() && doc["training"].contains("collective"));
  read_output(root, s);
  root.finish();
  s.plan = std::make_shared<const RunPlan>(plan_run(s));  // decided once (scenario/run_plan.hpp)
  return s;
}

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides) {
  json doc = read_json_file(file, "scenario");
  for (const auto& o : overrides) apply_override(doc, o);
  return parse_scenario(doc, std::filesystem::path(file).parent_path().string());
}

void check_bandwidth_factor(double factor, const std::string& path) {
  if (factor > 1)
    throw ConfigError(path, fmt::format("must be at most 1 (a factor of {:g} would move bytes faster than the link: "
                                        "no model may beat the wire); protocol overheads go in software.protocol_efficiency",
                                        factor));
}

}  // namespace ddlsim::sim
