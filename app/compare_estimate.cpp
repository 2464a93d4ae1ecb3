#include "app/compare_estimate.hpp"

#include "models/json_reader.hpp"
#include "models/rank_steps.hpp"
#include "scenario/work_constants.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>
#include <set>

namespace ddlsim::sim {
namespace {

using namespace work;  // the constants (scenario/work_constants.hpp)

/// Per step a rank holds (a schedule built whole): the step and its operations' heap, measured with
/// a tree all-reduce of 2^20 segments on 8 ranks (1.51 GB peak for 2.1 million steps per rank).
constexpr double SCHEDULE_STEP_MEMORY = 88;
/// `ddlsim schedule`, per operation of the document: building, dumping and printing it, its JSON
/// object, and its text. Measured with a ring all-reduce of 1,000 ranks (4 million operations: 5.3 s,
/// 2.35 GB peak, 183 MB printed).
constexpr double SCHEDULE_OP_S = 1.3e-6;
constexpr double SCHEDULE_OP_MEMORY = 560;
constexpr double SCHEDULE_OP_BYTES = 46;

/// One call of `algo` at flow fidelity: every rank's sends (the mean of a few ranks' times the
/// ranks that run), and the most steps one rank holds at once.
CallShape all_ranks(const models::Collective& algo, const models::CollectiveGroup& group, double bytes, bool stepwise) {
  const CallShape first = collective_call_shape(algo, 0, group, bytes, stepwise);
  CallShape total{0, first.steps, 0, first.widest};
  const auto add = [&total](const CallShape& s, double ranks) {
    total.sends += s.sends * ranks;
    total.shared += s.shared * ranks;
    total.steps = std::max(total.steps, s.steps);
    total.widest = std::max(total.widest, s.widest);
  };
  // Beyond the count a schedule is built for, rank 0's count stands for every rank's.
  std::set<int> sample{0};
  if (first.sends <= MAX_COUNTED_STEPS) sample.insert({group.workers / 2, group.workers - 1});
  for (const int r : sample)
    add(r == 0 ? first : collective_call_shape(algo, r, group, bytes, stepwise),
        static_cast<double>(group.workers) / static_cast<double>(sample.size()));
  if (algo.uses_servers() && group.servers > 0)
    add(collective_call_shape(algo, group.workers, group, bytes, stepwise), group.servers);
  return total;
}

}  // namespace

WorkEstimate estimate_compare(const CompareWork& w) {
  const CompareRequest& req = w.request;
  WorkEstimate e;
  e.subject = "this comparison";
  e.unit = "collective call";
  const auto& topo = w.topology;
  const double hosts = static_cast<double>(topo.workers.size() + topo.servers.size());
  const double links = static_cast<double>(boost::num_edges(topo.graph));
  const double ranks = w.group.size();
  const double degree = 2 * links / std::max(1.0, static_cast<double>(boost::num_vertices(topo.graph)));
  e.simulated_workers = req.simulate ? ranks : 0;
  e.terms.push_back({"platform graph", "--workers", (hosts + links) * FIBER_GRAPH_ELEMENT_S,
                     (hosts + links) * FIBER_GRAPH_ELEMENT_MEMORY});
  if (req.simulate) {
    e.terms.push_back({"platform hosts and actors", "--workers", hosts * HOST_S + ranks * ACTOR_S,
                       hosts * HOST_MEMORY + ranks * ACTOR_MEMORY});
    e.terms.push_back({"platform links", "--topology", links * (LINK_S + degree * LINK_DEGREE_S), links * LINK_MEMORY});
  }
  for (const auto& t : e.terms) e.setup_s += t.wall_s;
  e.wall_s = e.setup_s;

  const bool stepwise = req.network.granularity == Granularity::STEPWISE;
  double schedule_memory = 0;
  for (std::size_t i = 0; i < w.algorithms.size(); ++i) {
    const CompareRow& row = w.rows[i];
    if (!row.applicable) continue;
    ++e.iterations;
    if (!req.simulate) continue;
    const auto& algo = models::resolve(*w.algorithms[i], w.group, req.bytes, w.ab[i]);
    const CallShape shape = all_ranks(algo, w.group, req.bytes, stepwise);
    // The option that scales it: its params (segments, trees), else the ranks (no schedule has
    // more steps for more bytes).
    const std::string path =
        w.params_of(row.algorithm).empty() ? std::string("--workers") : pointer_append("--params", row.algorithm);
    // Every rank holds its schedule and its widest step's flows while the call runs (one call at
    // a time: the most of any).
    const double memory = ranks * (shape.steps * SCHEDULE_STEP_MEMORY + shape.widest * FLOW_MEMORY);
    schedule_memory = std::max(schedule_memory, memory);
    // Per flow as for `run` (scenario/work_estimate.cpp): dearer the more ranks' calls are held at once.
    const double wall_s = shape.sends * FLOW_S * (1 + ranks / FLOW_IN_FLIGHT_SCALE) + shape.shared * STEP_SHARED_FLOW_S;
    e.terms.push_back({fmt::format("flows of \"{}\"", row.algorithm), path, wall_s, memory});
    e.flows += shape.sends;
    e.wall_s += wall_s;
  }
  e.events = e.flows;
  e.events_per_iteration = e.iterations > 0 ? e.events / e.iterations : 0;
  e.memory_bytes = BASE_MEMORY + schedule_memory;
  for (const auto& t : e.terms)
    if (t.what.rfind("flows of", 0) != 0) e.memory_bytes += t.memory_bytes;
  return e;
}

WorkEstimate estimate_schedule(const models::Collective& runs, const models::CollectiveGroup& group, double bytes,
                               bool pipelined, const std::string& path) {
  WorkEstimate e;
  e.subject = "this schedule";
  e.unit = "collective call";
  e.iterations = 1;
  const double ops = 2 * all_ranks(runs, group, bytes, !pipelined).sends;
  e.events = e.events_per_iteration = ops;
  e.terms.push_back({"operations of every rank", path, ops * SCHEDULE_OP_S, ops * SCHEDULE_OP_MEMORY});
  e.wall_s = e.setup_s = ops * SCHEDULE_OP_S;
  e.memory_bytes = BASE_MEMORY + ops * SCHEDULE_OP_MEMORY;
  e.output_bytes = ops * SCHEDULE_OP_BYTES;
  return e;
}

}  // namespace ddlsim::sim
