// ddlsim: the scenario's compressor -- its encode/decode costs, and what it can be used with.
#include "models/artopk_choice.hpp"
#include "models/compressor.hpp"
#include "models/dependent_rounds.hpp"
#include "models/gathered_auto.hpp"
#include "scenario/scenario.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace ddlsim::sim {
namespace {

constexpr const char* TABLES = "scenarios/compressor_costs/cpu_this_machine.json (measured on this project's "
                               "development CPU) or v100_gravac.json (published V100 numbers: topk, dgc, randomk)";

models::CostTerms read_terms(ObjectReader r) {
  models::CostTerms t;
  t.fixed_s = r.time_s("fixed_s", 0);
  t.per_element_s = r.time_s("per_element_s", 0);
  t.n_log_k_s = r.time_s("n_log_k_s", 0);
  r.finish();
  return t;
}

/// The registered compressors whose params take a "ratio" (what adaptive compression varies).
std::vector<std::string> ratio_compressors() {
  std::vector<std::string> out;
  auto& r = models::CompressorRegistry::instance();
  for (const auto& n : r.names()) {
    try {
      (void)r.create(n, json{{"ratio", 0.1}}, "", "", "compressor");
      out.push_back(n);
    } catch (const ConfigError&) {
    }
  }
  return out;
}

/// Adaptive compression: the compressor at every candidate ratio, and what it needs.
void check_adaptive(Scenario& s) {
  auto& a = s.training.adaptive;
  const std::string path = "/training/adaptive_compression";
  const auto& name = s.training.compressor.name;
  const auto valid = ratio_compressors();
  if (std::find(valid.begin(), valid.end(), name) == valid.end())
    throw ConfigError(path, fmt::format("adaptive compression chooses the compressor's \"ratio\"; compressor \"{}\" "
                                        "has no ratio: use one of {}",
                                        name, join_names(valid)));
  if (s.training.compressor.params.is_object() && s.training.compressor.params.contains("ratio"))
    throw ConfigError("/training/compressor/params/ratio",
                      "adaptive compression chooses the ratio among its candidate_ratios: remove it here");
  if (s.training.sync_model->traits().uses_servers || !s.training.sync_model->traits().synchronous)
    throw ConfigError(path, fmt::format("adaptive compression explores and chooses in step across the workers: only "
                                        "with \"bsp\" and \"aggregation\": \"allreduce\", not sync model \"{}\" "
                                        "with parameter servers",
                                        s.training.sync.name));
  const int explored = static_cast<int>(a.settings.candidates.size()) * a.settings.explore_iterations;
  if (s.workload.iterations <= explored)
    throw ConfigError("/workload/iterations",
                      fmt::format("adaptive compression explores {} candidate ratios for {} iterations each before it "
                                  "chooses: run more than {} iterations, or lower "
                                  "training.adaptive_compression.explore_iterations",
                                  a.settings.candidates.size(), a.settings.explore_iterations, explored));
  for (double c : a.settings.candidates) {
    json params = s.training.compressor.params.is_object() ? s.training.compressor.params : json::object();
    params["ratio"] = c;
    a.candidates.push_back(models::CompressorRegistry::instance().create(name, params, "/training/compressor/name",
                                                                          "/training/compressor/params", "compressor"));
  }
}

}  // namespace

void read_adaptive_compression(ObjectReader& training, Scenario& s, const std::string& base_dir) {
  if (!training.has("adaptive_compression")) return;
  ObjectReader r = training.object("adaptive_compression");
  auto& a = s.training.adaptive;
  a.enabled = true;
  if (const json* c = r.find("candidate_ratios")) {
    const std::string path = r.path_of("candidate_ratios");
    if (!c->is_array() || c->size() < 2)
      throw ConfigError(path, fmt::format("expected an array of at least 2 ratios in (0, 1], got {}", json_type_name(*c)));
    a.settings.candidates.clear();
    for (std::size_t i = 0; i < c->size(); ++i) {
      const double v = checked_number((*c)[i], fmt::format("{}/{}", path, i), 0, 1);
      if (v <= 0) throw ConfigError(fmt::format("{}/{}", path, i), "a ratio must be above 0");
      if (!a.settings.candidates.empty() && v >= a.settings.candidates.back())
        throw ConfigError(fmt::format("{}/{}", path, i), "candidate ratios must decrease (the seed's order, 0.1 down to 0.001)");
      a.settings.candidates.push_back(v);
    }
  }
  a.settings.explore_iterations = static_cast<int>(r.integer("explore_iterations", 10, 1, 1'000'000));
  a.settings.change_threshold = r.number("change_threshold", 0.1, 0, 1e6);
  {
    ObjectReader w = r.object("weights");
    a.settings.time_weight = w.number("time", 0.6, 0, 1);
    a.settings.gain_weight = w.number("gain", 0.4, 0, 1);
    if (a.settings.time_weight <= 0 || a.settings.gain_weight <= 0)
      throw ConfigError(w.path(), "both weights must be above 0 (the seed's are time 0.6, gain 0.4)");
    w.finish();
  }
  const std::string gpath = r.path_of("gain_model");
  const json* g = r.find("gain_model");
  if (g == nullptr)
    throw ConfigError(gpath, "adaptive compression needs a gain model: a file such as "
                             "scenarios/compression_gain/digits_cnn_topk.json (made by tools/measure_gain.py), the "
                             "same object inline, or \"live\" with training.convergence");
  if (g->is_string() && g->get<std::string>().empty())
    throw ConfigError(gpath, "expected the file name of a gain model (e.g. scenarios/compression_gain/digits_cnn_topk.json, "
                             "made by tools/measure_gain.py), the same object inline, or \"live\", got an empty string");
  if (g->is_string() && g->get<std::string>() == "live") {
    a.live_gain = true;  // checked against training.convergence once it is read (scenario_convergence.cpp)
  } else if (g->is_string()) {
    a.gain_file = resolve_beside(g->get<std::string>(), base_dir);
    a.gain = std::make_shared<const models::GainModel>(models::GainModel::load(a.gain_file, gpath));
  } else {
    a.gain = std::make_shared<const models::GainModel>(models::GainModel::read(*g, gpath));
  }
  r.finish();
}

void read_compression_cost(ObjectReader& training, Scenario& s, const std::string& base_dir) {
  if (!training.has("compression_cost")) return;
  ObjectReader c = training.object("compression_cost");
  auto& spec = s.training.compression_cost;
  spec.given = true;
  if (c.has("table")) {
    if (c.has("encode") || c.has("decode"))
      throw ConfigError(c.path_of("table"), "give a \"table\" or \"encode\" and \"decode\" coefficients, not both");
    const std::string table = c.required_string("table");
    if (table.empty())
      throw ConfigError(c.path_of("table"),
                        fmt::format("expected the file name of a compression-cost table ({}), got an empty string", TABLES));
    spec.table_file = resolve_beside(table, base_dir);
  } else {
    spec.cost.encode = read_terms(c.object("encode"));
    spec.cost.decode = read_terms(c.object("decode"));
    spec.device = "given in the scenario";
  }
  c.finish();
}

void check_compression(Scenario& s) {
  const auto& name = s.training.compressor.name;
  auto& spec = s.training.compression_cost;
  if (s.training.adaptive.enabled) check_adaptive(s);
  if (name == "none") {
    if (spec.given)
      throw ConfigError("/training/compression_cost", "only with a compressor (\"compressor\": {\"name\": ...})");
    return;
  }
  const auto& sync = *s.training.sync_model;
  if (!sync.traits().compresses_gradients)
    throw ConfigError("/training/compressor/name",
                      fmt::format("sync model \"{}\" does not compress what it sends yet; compressors apply to the "
                                  "gradient buckets of \"bsp\", \"asp\" and \"ssp\"",
                                  s.training.sync.name));
  if (s.training.bucketing.policy == BucketingPolicy::MGWFBP)
    throw ConfigError("/training/bucketing/policy",
                      "\"mgwfbp\" merges buckets by the cost of dense all-reduces; with a compressor use \"policy\": "
                      "\"size\"");
  if (!spec.given)
    throw ConfigError("/training/compression_cost",
                      fmt::format("compressor \"{}\" needs its encode and decode costs: {{\"table\": FILE}} with {}, "
                                  "or {{\"encode\": {{\"fixed_s\", \"per_element_s\", \"n_log_k_s\"}}, \"decode\": {{...}}}}",
                                  name, TABLES));
  if (!spec.table_file.empty()) {
    const auto table = models::CompressionCostTable::load(spec.table_file, "/training/compression_cost/table");
    const auto* cost = table.find(name);
    if (cost == nullptr)
      throw ConfigError("/training/compression_cost/table",
                        fmt::format("cost table \"{}\" has no costs for compressor \"{}\"; it has: {}", spec.table_file,
                                    name, join_names(table.names())));
    spec.cost = *cost;
    spec.device = table.device;
  }
  // What the compressed buckets can be aggregated with.
  const auto aggregation = s.training.compressor_model->aggregation();
  const bool in_rounds = s.training.compressor_model->in_rounds();
  if (sync.traits().uses_servers && in_rounds)
    throw ConfigError("/training/compressor/name",
                      fmt::format("compressor \"{}\" sends each bucket in dependent rounds (PowerSGD: P, then Q "
                                  "computed from the reduced P), modelled on all-reduce only; sync model \"{}\" pushes "
                                  "to parameter servers: use \"bsp\" with \"aggregation\": \"allreduce\"",
                                  name, s.training.sync.name));
  if (sync.traits().uses_servers) {  // every encoding can be pushed and decoded by the servers, but AR-Topk's
    if (aggregation == models::Aggregation::ARTOPK)
      throw ConfigError("/training/compressor/name",
                        fmt::format("compressor \"artopk\" all-reduces every worker's values at one worker's top-k "
                                    "indices; sync model \"{}\" pushes to parameter servers: use \"topk\" (each "
                                    "worker's own top-k, decoded by the servers) or \"bsp\" with \"aggregation\": "
                                    "\"allreduce\"",
                                    s.training.sync.name));
    return;
  }
  const auto& coll = *s.training.collective_algorithm;
  if (aggregation == models::Aggregation::ARTOPK) {
    if (s.training.collective.name == "auto")
      s.training.collective_algorithm = std::shared_ptr<models::Collective>(models::make_artopk_auto());
    else if (coll.operation() != "artopk")
      throw ConfigError("/training/collective/name",
                        fmt::format("compressor \"artopk\" broadcasts one worker's top-k indices and all-reduces the "
                                    "values at them; \"{}\" is an {} algorithm: use artopk_ring, artopk_tree or "
                                    "\"auto\" (seed 002's inequalities, the all-gather included)",
                                    s.training.collective.name, coll.operation()));
    return;
  }
  if (aggregation == models::Aggregation::GATHER) {
    const auto gathers = [](const models::Collective& c) { return c.operation() == "allgather" && !c.uses_servers(); };
    std::vector<std::string> valid;
    for (const auto& n : models::CollectiveRegistry::instance().names())
      if (n != "auto" && gathers(*models::CollectiveRegistry::instance().create(n, json::object(), "", "", "collective")))
        valid.push_back(n);
    if (s.training.collective.name == "auto") {
      // Per call, the all-gather with the smallest closed form (summary.json: collective_choices).
      std::vector<std::pair<std::string, std::unique_ptr<models::Collective>>> candidates;
      for (const auto& n : valid)
        candidates.emplace_back(n, models::CollectiveRegistry::instance().create(n, json::object(), "", "", "collective"));
      s.training.collective_algorithm = std::shared_ptr<models::Collective>(models::make_cheapest_allgather(std::move(candidates)));
    } else if (!gathers(coll)) {
      throw ConfigError("/training/collective/name",
                        fmt::format("compressor \"{}\" sends every worker's own encoding ({}), which cannot be summed "
                                    "in transit; \"{}\" is an {} algorithm: use an all-gather ({}) or \"auto\"",
                                    name, s.training.compressor_model->index_encoding(), s.training.collective.name,
                                    coll.operation(), join_names(valid)));
    }
  } else if (coll.operation() != "allreduce") {
    throw ConfigError("/training/collective/name",
                      fmt::format("compressor \"{}\" is summed in transit: use an all-reduce algorithm, not the {} "
                                  "algorithm \"{}\"",
                                  name, coll.operation(), s.training.collective.name));
  } else if (in_rounds) {  // one all-reduce per round, each after the previous (models/dependent_rounds.hpp)
    s.training.collective_algorithm =
        std::make_shared<models::DependentRounds>(s.training.collective_algorithm, s.training.compressor_model);
  }
}

}  // namespace ddlsim::sim
