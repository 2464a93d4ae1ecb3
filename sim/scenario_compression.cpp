// ddlsim: the scenario's compressor -- its encode/decode costs, and what it can be used with.
#include "models/artopk_choice.hpp"
#include "models/compressor.hpp"
#include "sim/scenario.hpp"

#include <fmt/format.h>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace ddlsim::sim {
namespace {

constexpr const char* TABLES = "scenarios/compressor_costs/cpu_this_machine.json (measured on this project's "
                               "development CPU) or v100_gravac.json (published V100 numbers: topk, dgc, randomk)";

/// "auto" under a gathering compressor: per call, the all-gather with the smallest closed form.
class CheapestAllgather final : public models::Collective {
 public:
  explicit CheapestAllgather(std::vector<std::pair<std::string, std::unique_ptr<models::Collective>>> candidates)
      : candidates_(std::move(candidates)) {}
  [[nodiscard]] std::string operation() const override { return "allgather"; }
  [[nodiscard]] double analytic_time_s(const models::CollectiveGroup& g, double bytes,
                                       const models::AlphaBeta& ab) const override {
    return best(g, bytes, ab).second->analytic_time_s(g, bytes, ab);
  }
  [[nodiscard]] std::vector<models::RankStep> rank_schedule(int rank, const models::CollectiveGroup& g,
                                                            double bytes) const override {
    return candidates_.front().second->rank_schedule(rank, g, bytes);  // never run: resolve() picks first
  }
  [[nodiscard]] const models::Collective& resolve(const models::CollectiveGroup& g, double bytes,
                                                  const models::AlphaBeta& ab) const override {
    return *best(g, bytes, ab).second;
  }
  [[nodiscard]] std::string resolved_name(const models::CollectiveGroup& g, double bytes,
                                          const models::AlphaBeta& ab) const override {
    return best(g, bytes, ab).first;
  }
  [[nodiscard]] std::optional<models::CollectiveChoice> choice(const models::CollectiveGroup& g, double bytes,
                                                               const models::AlphaBeta& ab) const override {
    const auto& b = best(g, bytes, ab);
    return models::CollectiveChoice{b.first, b.second->analytic_time_s(g, bytes, ab), "closed form (all-gathers)"};
  }

 private:
  [[nodiscard]] const std::pair<std::string, std::unique_ptr<models::Collective>>& best(
      const models::CollectiveGroup& g, double bytes, const models::AlphaBeta& ab) const {
    const auto* out = &candidates_.front();
    for (const auto& c : candidates_)
      if (c.second->analytic_time_s(g, bytes, ab) < out->second->analytic_time_s(g, bytes, ab)) out = &c;
    return *out;
  }
  std::vector<std::pair<std::string, std::unique_ptr<models::Collective>>> candidates_;
};

/// The all-gather alternative to AR-Topk, called with M_c: every worker's values and indices,
/// 2 M_c each, 2 N M_c in all, by Bruck's all-gather (the seed's alpha log N + 2(N-1) M_c beta).
class ArtopkAllgather final : public models::Collective {
 public:
  ArtopkAllgather() : bruck_(models::CollectiveRegistry::instance().create("bruck_allgather", json::object(), "", "", "")) {}
  [[nodiscard]] std::string operation() const override { return "artopk"; }
  [[nodiscard]] double analytic_time_s(const models::CollectiveGroup& g, double mc, const models::AlphaBeta& ab) const override {
    return bruck_->analytic_time_s(g, 2 * g.workers * mc, ab);
  }
  [[nodiscard]] std::vector<models::RankStep> rank_schedule(int rank, const models::CollectiveGroup& g,
                                                            double mc) const override {
    return bruck_->rank_schedule(rank, g, 2 * g.workers * mc);
  }
  [[nodiscard]] std::vector<models::RankStep> rank_phases(int rank, const models::CollectiveGroup& g,
                                                          double mc) const override {
    return bruck_->rank_phases(rank, g, 2 * g.workers * mc);
  }

 private:
  std::unique_ptr<models::Collective> bruck_;
};

/// "auto" under AR-Topk: per call, the seed's alpha-beta inequalities pick AR-Topk over a ring,
/// over a tree, or the all-gather of every worker's top-k (models/artopk_choice.hpp).
class ArtopkAuto final : public models::Collective {
 public:
  ArtopkAuto() {
    auto& r = models::CollectiveRegistry::instance();
    ring_ = r.create("artopk_ring", json::object(), "", "", "");
    tree_ = r.create("artopk_tree", json::object(), "", "", "");
  }
  [[nodiscard]] std::string operation() const override { return "artopk"; }
  [[nodiscard]] double analytic_time_s(const models::CollectiveGroup& g, double mc, const models::AlphaBeta& ab) const override {
    return resolve(g, mc, ab).analytic_time_s(g, mc, ab);
  }
  [[nodiscard]] std::vector<models::RankStep> rank_schedule(int rank, const models::CollectiveGroup& g,
                                                            double mc) const override {
    return ring_->rank_schedule(rank, g, mc);  // never run: resolve() picks first
  }
  [[nodiscard]] const models::Collective& resolve(const models::CollectiveGroup& g, double mc,
                                                  const models::AlphaBeta& ab) const override {
    switch (models::choose_artopk(g.workers, ab.alpha_s, ab.beta_s_per_byte, mc).fastest) {
      case models::ArtopkCollective::ARTOPK_RING: return *ring_;
      case models::ArtopkCollective::ARTOPK_TREE: return *tree_;
      case models::ArtopkCollective::ALLGATHER: return allgather_;
    }
    return *ring_;
  }
  [[nodiscard]] std::string resolved_name(const models::CollectiveGroup& g, double mc,
                                          const models::AlphaBeta& ab) const override {
    return to_string(models::choose_artopk(g.workers, ab.alpha_s, ab.beta_s_per_byte, mc).fastest);
  }
  [[nodiscard]] std::optional<models::CollectiveChoice> choice(const models::CollectiveGroup& g, double mc,
                                                               const models::AlphaBeta& ab) const override {
    const auto c = models::choose_artopk(g.workers, ab.alpha_s, ab.beta_s_per_byte, mc);
    const double t = c.fastest == models::ArtopkCollective::ARTOPK_RING   ? c.costs.artopk_ring_s
                     : c.fastest == models::ArtopkCollective::ARTOPK_TREE ? c.costs.artopk_tree_s
                                                                          : c.costs.allgather_s;
    return models::CollectiveChoice{to_string(c.fastest), t, "seed 002's alpha-beta inequalities"};
  }

 private:
  std::unique_ptr<models::Collective> ring_, tree_;
  ArtopkAllgather allgather_;
};

models::CostTerms read_terms(ObjectReader r) {
  models::CostTerms t;
  t.fixed_s = r.time_s("fixed_s", 0);
  t.per_element_s = r.time_s("per_element_s", 0);
  t.n_log_k_s = r.time_s("n_log_k_s", 0);
  r.finish();
  return t;
}

}  // namespace

void read_compression_cost(ObjectReader& training, Scenario& s, const std::string& base_dir) {
  if (!training.has("compression_cost")) return;
  ObjectReader c = training.object("compression_cost");
  auto& spec = s.training.compression_cost;
  spec.given = true;
  if (c.has("table")) {
    if (c.has("encode") || c.has("decode"))
      throw ConfigError(c.path_of("table"), "give a \"table\" or \"encode\" and \"decode\" coefficients, not both");
    spec.table_file = resolve_beside(c.required_string("table"), base_dir);
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
  if (name == "none") {
    if (spec.given)
      throw ConfigError("/training/compression_cost", "only with a compressor (\"compressor\": {\"name\": ...})");
    return;
  }
  const auto& sync = *s.training.sync_model;
  if (!sync.compresses_gradients())
    throw ConfigError("/training/compressor/name",
                      fmt::format("sync model \"{}\" does not compress what it sends yet; compressors apply to the "
                                  "gradient buckets of \"bsp\" with \"aggregation\": \"allreduce\"",
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
  const auto aggregation = s.training.compressor_model->encode(1e6).aggregation;
  const auto& coll = *s.training.collective_algorithm;
  if (aggregation == models::Aggregation::ARTOPK) {
    if (s.training.collective.name == "auto")
      s.training.collective_algorithm = std::make_shared<ArtopkAuto>();
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
      s.training.collective_algorithm = std::make_shared<CheapestAllgather>(std::move(candidates));
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
  }
}

}  // namespace ddlsim::sim
