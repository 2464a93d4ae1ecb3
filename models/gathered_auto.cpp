// ddlsim: "auto" under a compressor whose buckets are not summed (models/gathered_auto.hpp).
#include "models/gathered_auto.hpp"

#include "models/artopk_choice.hpp"

#include <nlohmann/json.hpp>

namespace ddlsim::models {
namespace {

/// "auto" under a gathering compressor: per call, the all-gather with the smallest closed form.
class CheapestAllgather final : public Collective, public CollectiveSelector {
 public:
  explicit CheapestAllgather(std::vector<std::pair<std::string, std::unique_ptr<Collective>>> candidates)
      : candidates_(std::move(candidates)) {}
  [[nodiscard]] std::string operation() const override { return "allgather"; }
  [[nodiscard]] double analytic_time_s(const CollectiveGroup& g, double bytes,
                                       const AlphaBeta& ab) const override {
    return best(g, bytes, ab).second->analytic_time_s(g, bytes, ab);
  }
  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& g,
                                                            double bytes) const override {
    return candidates_.front().second->rank_schedule(rank, g, bytes);  // never run: resolve() picks first
  }
  [[nodiscard]] const Collective& resolve(const CollectiveGroup& g, double bytes,
                                                  const AlphaBeta& ab) const override {
    return *best(g, bytes, ab).second;
  }
  [[nodiscard]] std::string resolved_name(const CollectiveGroup& g, double bytes,
                                          const AlphaBeta& ab) const override {
    return best(g, bytes, ab).first;
  }
  [[nodiscard]] std::optional<CollectiveChoice> choice(const CollectiveGroup& g, double bytes,
                                                               const AlphaBeta& ab) const override {
    const auto& b = best(g, bytes, ab);
    return CollectiveChoice{b.first, b.second->analytic_time_s(g, bytes, ab), "closed form (all-gathers)"};
  }

 private:
  [[nodiscard]] const std::pair<std::string, std::unique_ptr<Collective>>& best(
      const CollectiveGroup& g, double bytes, const AlphaBeta& ab) const {
    const auto* out = &candidates_.front();
    for (const auto& c : candidates_)
      if (c.second->analytic_time_s(g, bytes, ab) < out->second->analytic_time_s(g, bytes, ab)) out = &c;
    return *out;
  }
  std::vector<std::pair<std::string, std::unique_ptr<Collective>>> candidates_;
};

/// The all-gather alternative to AR-Topk, called with M_c: every worker's values and indices,
/// 2 M_c each, 2 N M_c in all, by Bruck's all-gather (the seed's alpha log N + 2(N-1) M_c beta).
class ArtopkAllgather final : public Collective {
 public:
  ArtopkAllgather() : bruck_(CollectiveRegistry::instance().create("bruck_allgather", json::object(), "", "", "")) {}
  [[nodiscard]] std::string operation() const override { return "artopk"; }
  [[nodiscard]] double analytic_time_s(const CollectiveGroup& g, double mc, const AlphaBeta& ab) const override {
    return bruck_->analytic_time_s(g, 2 * g.workers * mc, ab);
  }
  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& g,
                                                            double mc) const override {
    return bruck_->rank_schedule(rank, g, 2 * g.workers * mc);
  }
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& g,
                                                          double mc) const override {
    return bruck_->rank_phases(rank, g, 2 * g.workers * mc);
  }

 private:
  std::unique_ptr<Collective> bruck_;
};

/// "auto" under AR-Topk: per call, the seed's alpha-beta inequalities pick AR-Topk over a ring,
/// over a tree, or the all-gather of every worker's top-k (models/artopk_choice.hpp).
class ArtopkAuto final : public Collective, public CollectiveSelector {
 public:
  ArtopkAuto() {
    auto& r = CollectiveRegistry::instance();
    ring_ = r.create("artopk_ring", json::object(), "", "", "");
    tree_ = r.create("artopk_tree", json::object(), "", "", "");
  }
  [[nodiscard]] std::string operation() const override { return "artopk"; }
  [[nodiscard]] double analytic_time_s(const CollectiveGroup& g, double mc, const AlphaBeta& ab) const override {
    return resolve(g, mc, ab).analytic_time_s(g, mc, ab);
  }
  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& g,
                                                            double mc) const override {
    return ring_->rank_schedule(rank, g, mc);  // never run: resolve() picks first
  }
  [[nodiscard]] const Collective& resolve(const CollectiveGroup& g, double mc,
                                                  const AlphaBeta& ab) const override {
    switch (choose_artopk(g.workers, ab.alpha_s, ab.beta_s_per_byte, mc).fastest) {
      case ArtopkCollective::ARTOPK_RING: return *ring_;
      case ArtopkCollective::ARTOPK_TREE: return *tree_;
      case ArtopkCollective::ALLGATHER: return allgather_;
    }
    return *ring_;
  }
  [[nodiscard]] std::string resolved_name(const CollectiveGroup& g, double mc,
                                          const AlphaBeta& ab) const override {
    return to_string(choose_artopk(g.workers, ab.alpha_s, ab.beta_s_per_byte, mc).fastest);
  }
  [[nodiscard]] std::optional<CollectiveChoice> choice(const CollectiveGroup& g, double mc,
                                                               const AlphaBeta& ab) const override {
    const auto c = choose_artopk(g.workers, ab.alpha_s, ab.beta_s_per_byte, mc);
    const double t = c.fastest == ArtopkCollective::ARTOPK_RING   ? c.costs.artopk_ring_s
                     : c.fastest == ArtopkCollective::ARTOPK_TREE ? c.costs.artopk_tree_s
                                                                          : c.costs.allgather_s;
    return CollectiveChoice{to_string(c.fastest), t, "seed 002's alpha-beta inequalities"};
  }

 private:
  std::unique_ptr<Collective> ring_, tree_;
  ArtopkAllgather allgather_;
};

}  // namespace

std::unique_ptr<Collective> make_cheapest_allgather(std::vector<std::pair<std::string, std::unique_ptr<Collective>>> candidates) {
  return std::make_unique<CheapestAllgather>(std::move(candidates));
}

std::unique_ptr<Collective> make_artopk_auto() { return std::make_unique<ArtopkAuto>(); }

}  // namespace ddlsim::models
