// "auto": the all-reduce algorithm with the smallest cost on this platform, per call.
//
// Holds one instance (default parameters) of every registered all-reduce that
// needs no parameter server -- or of the names in "candidates" -- and for a
// (group, bytes, alpha, beta) picks the cheapest (ties: first in candidate
// order, alphabetical by default):
//   * when the group carries a NetworkCost (sim/ sets one on every platform but
//     a uniform one-switch star), by that contention-aware estimate of each
//     candidate's schedule (models/network_cost.hpp); a candidate whose schedule
//     is too large to estimate is left out and named in the choice's basis, and
//     when none can be estimated the closed forms decide, and the basis says so;
//   * otherwise by the closed forms (analytic_time_s), exact on the reference star.
// analytic_time_s is the pick's closed form; resolve() / resolved_name() return
// the pick and choice() also its cost and basis. rank_schedule() and
// rank_phases() get no alpha-beta, so they pick for the reference network given
// by "latency" (default 2us) and "bandwidth" (default 25Gbps) (or by the group's
// NetworkCost); sim/ runs resolve(group, bytes, ab).rank_schedule(...).
//
// The crossovers below are those of the closed forms, i.e. of the reference star.
//
// Crossovers (closed forms of the files beside this one; a = alpha, b = beta,
// M bytes; N a power of 2, and N = 2^(D+1) - 1 for the perfect tree):
//   ring       2(N-1) a + 2(N-1)/N M b       halving_doubling  2 log2N a + 2(N-1)/N M b
//   rec. doubl. log2N (a + M b)              direct            2 a + 2(N-1)/N M b
//   tree (perfect, D = log2(N+1) - 1)  2D (a + 2 M b)
//   * halving_doubling <= ring (same bandwidth term, fewer latencies);
//   * recursive_doubling < halving_doubling  iff  M < a log2N / (b (log2N - 2(N-1)/N));
//   * recursive_doubling < ring  iff  M < a (2(N-1) - log2N) / (b (log2N - 2(N-1)/N));
//   * tree < ring  iff  M < a (2(N-1) - 2D) / (b (4D - 2(N-1)/N));
//   e.g. a = 2us, 25 Gbps, N = 64: recursive doubling beats halving-doubling
//   below ~9.3 KB and the ring below ~186 KB.
//   * direct: its latency term (2 a) is the smallest of any algorithm for N >= 3
//     and its bandwidth term is the lower bound 2(N-1)/N M b, so on the ideal
//     star (no incast, no per-flow overhead) it wins every N >= 3 for any
//     alpha, beta > 0; for N = 2 recursive doubling (a + M b) wins. Restrict
//     "candidates" (e.g. ["ring", "tree", "recursive_doubling",
//     "halving_doubling"]) to pick among the algorithms real fabrics favour;
//     the crossovers above then decide.
// Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005 (MPICH's size-based
// switch between recursive doubling and Rabenseifner); NCCL's tuning model
// (ring vs tree by size).
#include "models/collective.hpp"
#include "models/network_cost.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::models {
namespace {

struct Candidate {
  std::string name;
  std::unique_ptr<Collective> algorithm;
};

class AutoAllreduce final : public Collective, public CollectiveSelector {
 public:
  AutoAllreduce(std::vector<Candidate> candidates, AlphaBeta reference)
      : candidates_(std::move(candidates)), reference_(reference) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    return pick(group, bytes, ab).winner->algorithm->analytic_time_s(group, bytes, ab);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    return pick(group, bytes, reference_).winner->algorithm->rank_schedule(rank, group, bytes);
  }

  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    return pick(group, bytes, reference_).winner->algorithm->rank_phases(rank, group, bytes);
  }

  [[nodiscard]] std::unique_ptr<StepSource> rank_steps(int rank, const CollectiveGroup& group,
                                                       double bytes) const override {
    return pick(group, bytes, reference_).winner->algorithm->rank_steps(rank, group, bytes);
  }

  [[nodiscard]] std::string resolved_name(const CollectiveGroup& group, double bytes,
                                          const AlphaBeta& ab) const override {
    return pick(group, bytes, ab).winner->name;
  }

  [[nodiscard]] std::optional<CollectiveChoice> choice(const CollectiveGroup& group, double bytes,
                                                       const AlphaBeta& ab) const override {
    const Pick p = pick(group, bytes, ab);
    CollectiveChoice c;
    c.algorithm = p.winner->name;
    c.estimated_s = p.cost_s;
    if (!p.estimated) {
      c.basis = group.network_cost ? "closed form (platform too large for the contention estimate)" : "closed form";
    } else if (p.skipped.empty()) {
      c.basis = "contention estimate";
    } else {
      std::vector<std::string> names;
      for (const auto* s : p.skipped) names.push_back(s->name);
      c.basis = fmt::format("contention estimate ({} left out: too large to estimate)", fmt::join(names, ", "));
    }
    return c;
  }

  [[nodiscard]] const Collective& resolve(const CollectiveGroup& group, double bytes,
                                          const AlphaBeta& ab) const override {
    return *pick(group, bytes, ab).winner->algorithm;
  }

 private:
  struct Pick {
    const Candidate* winner = nullptr;
    double cost_s = 0;
    bool estimated = false;                  // by the group's NetworkCost, not the closed forms
    std::vector<const Candidate*> skipped;   // too large to estimate
  };

  [[nodiscard]] Pick pick(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const {
    Pick p;
    if (group.network_cost) {
      for (const auto& c : candidates_) {
        const auto t = group.network_cost->time_s(*c.algorithm, group, bytes);
        if (!t) {
          p.skipped.push_back(&c);
        } else if (p.winner == nullptr || *t < p.cost_s) {
          p.winner = &c;
          p.cost_s = *t;
        }
      }
      if (p.winner != nullptr) {
        p.estimated = true;
        return p;
      }
      p.skipped.clear();
    }
    for (const auto& c : candidates_) {
      const double t = c.algorithm->analytic_time_s(group, bytes, ab);
      if (p.winner == nullptr || t < p.cost_s) {
        p.winner = &c;
        p.cost_s = t;
      }
    }
    return p;
  }

  std::vector<Candidate> candidates_;
  AlphaBeta reference_;
};

std::unique_ptr<Collective> make_auto(ObjectReader& params) {
  auto& registry = CollectiveRegistry::instance();
  std::vector<Candidate> all;
  for (const auto& name : registry.names()) {
    // gloo_ring is gloo's own ring, not an algorithm a library picks between (its windowed steps
    // have no contention estimate either, models/schedule_graph.hpp).
    if (name == "auto" || name == "gloo_ring") continue;
    auto algorithm = registry.create(name, json::object(), params.path(), params.path(), "collective");
    if (algorithm->operation() == "allreduce" && !algorithm->uses_servers())
      all.push_back(Candidate{name, std::move(algorithm)});
  }
  std::vector<std::string> valid;
  for (const auto& c : all) valid.push_back(c.name);

  std::vector<Candidate> chosen;
  if (const json* list = params.find("candidates")) {
    const std::string path = params.path_of("candidates");
    if (!list->is_array() || list->empty())
      throw ConfigError(path, fmt::format("expected a non-empty array of algorithm names, got {}", json_type_name(*list)));
    for (std::size_t i = 0; i < list->size(); ++i) {
      const json& item = (*list)[i];
      const std::string item_path = pointer_append(path, std::to_string(i));
      if (!item.is_string()) throw ConfigError(item_path, fmt::format("expected a string, got {}", json_type_name(item)));
      const auto name = item.get<std::string>();
      auto it = std::find_if(all.begin(), all.end(), [&](const Candidate& c) { return c.name == name; });
      if (it == all.end())
        throw ConfigError(item_path, fmt::format("unknown all-reduce algorithm \"{}\"; valid names are: {}", excerpt(name),
                                                 join_names(valid)));
      chosen.push_back(Candidate{name, registry.create(name, json::object(), item_path, item_path, "collective")});
    }
  } else {
    chosen = std::move(all);
  }
  AlphaBeta reference;
  reference.alpha_s = params.latency_s("latency", 2e-6);
  reference.beta_s_per_byte = 1.0 / params.bandwidth_Bps("bandwidth", 3.125e9);
  return std::make_unique<AutoAllreduce>(std::move(chosen), reference);
}

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "auto",
                "all-reduce picked per call by the smallest cost among the registered ones: contention estimate on the platform, "
                "closed form on the reference star",
                [](ddlsim::ObjectReader& params) { return ddlsim::models::make_auto(params); })
