#include "scenario/work_estimate.hpp"

#include "scenario/push_pull_solver.hpp"

#include "scenario/work_constants.hpp"
#include "models/rank_traffic.hpp"
#include "scenario/run_plan.hpp"

#include "models/error.hpp"
#include "models/logical_graph.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <stdexcept>

namespace ddlsim::sim {
namespace {

using namespace work;  // the constants (scenario/work_constants.hpp)


CallShape call_shape(const WorkPlan& w, double bytes) {
  const auto& algo = w.scenario.plan->gradient_collective(bytes);  // resolved at load (scenario/run_plan.hpp)
  try {
    return collective_call_shape(algo, 0, w.group, bytes, w.scenario.network.granularity == Granularity::STEPWISE);
  } catch (const std::invalid_argument& e) {  // an algorithm refusing this size (gloo_ring's message limit)
    throw ConfigError("/training/collective/params", e.what());
  }
}

/// The mean number of links between worker 0 and every other host (breadth-first).
double mean_hops(const platforms::Topology& topo) {
  const auto& g = topo.graph;
  if (topo.workers.empty()) return 1;
  std::vector<int> depth(boost::num_vertices(g), -1);
  std::vector<platforms::Vertex> queue{topo.workers.front()};
  depth[queue.front()] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head)
    for (auto e : boost::make_iterator_range(boost::out_edges(queue[head], g)))
      if (const auto v = boost::target(e, g); depth[v] < 0) {
        depth[v] = depth[queue[head]] + 1;
        queue.push_back(v);
      }
  double sum = 0, hosts = 0;
  for (const auto& group : {topo.workers, topo.servers})
    for (const auto v : group)
      if (v != topo.workers.front() && depth[v] > 0) {
        sum += depth[v];
        hosts += 1;
      }
  return hosts > 0 ? sum / hosts : 1;
}

std::string layers_path(const Scenario& s) {
  return s.workload.profile_file.empty() ? "/workload/synthetic/layers" : "/workload/profile";
}

std::string collective_path(const Scenario& s) {
  return s.training.collective.params.is_object() && !s.training.collective.params.empty() ? "/training/collective/params"
                                                                                            : "/training/collective";
}

}  // namespace

CallShape collective_call_shape(const models::Collective& algo, int rank, const models::CollectiveGroup& group,
                                double bytes, bool stepwise) {
  // The closed form with alpha = 1 and beta = 0 counts the latency steps of a rank.
  const double latency_steps = algo.analytic_time_s(group, bytes, models::AlphaBeta(1.0, 0.0));
  if (!(latency_steps <= MAX_COUNTED_STEPS)) return {latency_steps, latency_steps, latency_steps, 1};
  const auto source = models::rank_steps(algo, rank, group, bytes, stepwise);
  CallShape shape{0, static_cast<double>(source->held()), 0, 0};
  for (models::RankStep step; source->next(step);) {
    double sends = 0;
    for (const auto& op : step.ops) {
      if (op.kind != models::RankOp::Kind::SEND) continue;
      sends += 1;
      shape.bytes_sent += op.bytes;
    }
    shape.sends += sends;
    shape.shared += sends * sends;
    shape.widest = std::max(shape.widest, sends);
  }
  return shape;
}

namespace {

/// The counts the estimate is made of.
struct RunCounts {
  double n = 0, servers = 0, hosts = 0, links = 0, layers = 0, buckets = 0, inflight = 0, actors = 0, iterations = 0;
  double calls = 0;       // runtime calls per worker and iteration
  double simulated = 0;   // workers simulated one by one
  bool fibers = false;    // the fiber lane runs it
  bool classes = false;   // one worker per class of identical workers
  std::string workers_path;
};

RunCounts count_run(const WorkPlan& w) {
  const Scenario& s = w.scenario;
  const auto& topo = s.platform.graph;
  RunCounts c;
  c.n = s.platform.workers;
  c.servers = s.platform.parameter_servers;
  c.hosts = static_cast<double>(topo.workers.size() + topo.servers.size());
  c.links = static_cast<double>(boost::num_edges(topo.graph));
  c.layers = static_cast<double>(w.plan.profile->layers.size());
  c.buckets = static_cast<double>(w.plan.buckets.size());
  c.inflight = s.training.bucketing.max_inflight;
  c.actors = c.n * (1 + c.inflight) + 2 * c.servers;
  c.iterations = s.workload.iterations;
  c.workers_path = c.servers > c.n ? "/platform/parameter_servers" : "/platform/workers";
  // The fiber lane simulates `simulated` workers (one per class of identical workers where it can).
  c.fibers = s.plan->fiber_lane();
  const auto& classes = c.fibers && !w.every_worker ? s.plan->classes : std::nullopt;
  c.classes = classes.has_value();
  c.simulated = classes ? static_cast<double>(classes->simulated.size()) : c.n;
  c.calls = 2 * c.layers + 2 * c.buckets + 6;
  return c;
}

/// Set-up: the platform and the actors (the fiber lane: the graph and the fibers), the profile.
void add_setup_terms(const WorkPlan& w, const RunCounts& c, WorkEstimate& e) {
  const Scenario& s = w.scenario;
  const auto& topo = s.platform.graph;
  const double degree = 2 * c.links / std::max(1.0, static_cast<double>(boost::num_vertices(topo.graph)));
  if (c.fibers) {
    e.terms.push_back({"platform graph and fibers", c.workers_path, (c.hosts + c.links) * FIBER_GRAPH_ELEMENT_S,
                       (c.hosts + c.links) * FIBER_GRAPH_ELEMENT_MEMORY + c.simulated * FIBER_MEMORY});
  } else {
    e.terms.push_back({"platform hosts and actors", c.workers_path, c.hosts * HOST_S + c.actors * ACTOR_S,
                       c.hosts * HOST_MEMORY + c.actors * ACTOR_MEMORY});
    e.terms.push_back({"platform links", "/platform/topology", c.links * (LINK_S + degree * LINK_DEGREE_S),
                       c.links * LINK_MEMORY});
  }
  e.terms.push_back({"profile layers", layers_path(s), c.layers * LAYER_S, c.layers * LAYER_MEMORY});
  for (const auto& t : e.terms) e.setup_s += t.wall_s;
}

/// Per iteration: every worker's trace replay.
void add_replay_terms(const WorkPlan& w, const RunCounts& c, std::vector<WorkTerm>& per_iteration) {
  const Scenario& s = w.scenario;
  if (c.fibers) {
    per_iteration.push_back({"trace replay and analytic collectives", layers_path(s),
                             c.simulated * (FIBER_WORKER_ITERATION_S + c.buckets * ANALYTIC_COLLECTIVE_S), 0});
    if (c.classes)
      per_iteration.push_back(
          {"records of the workers not simulated", c.workers_path, (c.n - c.simulated) * COPIED_RECORD_S, 0});
    if (s.output.iterations_csv)
      per_iteration.push_back({"iterations.csv", "/output/iterations_csv", c.n * FIBER_CSV_ROW_S, 0});
  } else {
    per_iteration.push_back(
        {"trace replay", layers_path(s), c.n * (WORKER_ITERATION_S + c.calls * COMPUTE_CALL_S), 0});
  }
}

/// Per iteration: the communication (collectives, subgroup flags, parameter servers, point to
/// point); adds the engine events and flows it makes.
void add_communication_terms(const WorkPlan& w, const RunCounts& c, std::vector<WorkTerm>& per_iteration,
                             double& events, double& flows) {
  const Scenario& s = w.scenario;
  const auto& sync = *s.training.sync_model;
  const double n = c.n;
  double wire_bytes = 0;  // payload all the ranks together send per iteration (packet fidelity's packets)
  if (sync.traits().uses_collective) {
    // Hybrid sharding's collectives among groups run as flows at every fidelity.
    if (s.network.fidelity == Fidelity::ANALYTIC && s.training.sharding.strategy != models::ShardingStrategy::FSDP_HYBRID_SHARD) {
      if (!c.fibers)
        per_iteration.push_back({"analytic collectives", collective_path(s), n * c.buckets * ANALYTIC_COLLECTIVE_S, 0});
      events += c.simulated * c.buckets;
    } else {
      std::map<double, CallShape> shapes;  // by bucket bytes
      double sends = 0, held = 0, shared = 0, widest = 0;
      for (std::size_t b = 0; b < w.plan.buckets.size(); ++b) {
        const double bytes = b < w.plan.compression.size() ? w.plan.compression[b].comm_bytes : w.plan.buckets[b].bytes;
        auto found = shapes.find(bytes);
        if (found == shapes.end()) found = shapes.emplace(bytes, call_shape(w, bytes)).first;
        sends += found->second.sends;
        wire_bytes += n * found->second.bytes_sent;
        shared += found->second.shared;
        held = std::max(held, found->second.steps);
        widest = std::max(widest, found->second.widest);
      }
      const double call_flows = n * sends;
      // A flow costs more the more ranks' calls SimGrid holds at once (their actors, activities and
      // the sharing's variables leave the caches): each FLOW_IN_FLIGHT_SCALE of them add one FLOW_S.
      // (The flows of one rank's wide steps are priced by STEP_SHARED_FLOW_S, measured on them.)
      const double in_flight = n * c.inflight;
      const double per_flow_s = FLOW_S * (1 + in_flight / FLOW_IN_FLIGHT_SCALE);
      // While a call runs, every rank holds its schedule and its widest step's flows.
      per_iteration.push_back(
          {"collective flows", collective_path(s), call_flows * per_flow_s + n * shared * STEP_SHARED_FLOW_S,
           n * c.inflight * (held * static_cast<double>(sizeof(models::RankStep)) + widest * FLOW_MEMORY)});
      flows += call_flows;
    }
  }
  if (sync.traits().uses_subgroup_collectives) {
    // A subgroup all-reduce runs as flows at every fidelity. The one model that makes them,
    // selective_sync, exchanges its flags by one all-reduce of CONTROL_BYTES among all the workers
    // every iteration, with the scenario's collective (SyncModel says no more than that it makes some).
    const auto& algo = s.plan->gradient_collective(models::CONTROL_BYTES);
    const CallShape shape = collective_call_shape(algo, 0, w.group, models::CONTROL_BYTES,
                                                  s.network.granularity == Granularity::STEPWISE);
    per_iteration.push_back({"flag all-reduce flows", "/training/sync",
                             n * shape.sends * FLOW_S + n * shape.shared * STEP_SHARED_FLOW_S,
                             n * (shape.steps * static_cast<double>(sizeof(models::RankStep)) + shape.widest * FLOW_MEMORY)});
    flows += n * shape.sends;
  }
  if (sync.traits().uses_servers) {
    // A shard of every bucket to every server and back. On the fluid links each flow costs its
    // own events (engine/fluid_ps.hpp); on SimGrid's LMM the flows into one server share its
    // link, and each start and end re-shares the bandwidth among all of them.
    const double ps_flows = 2 * n * c.servers * c.buckets;
    wire_bytes += 2 * n * w.plan.profile->grad_bytes();
    if (push_pull_fluid_refusal(s).empty()) {
      per_iteration.push_back({"parameter-server flows (fluid links)", "/platform/parameter_servers", ps_flows * FLUID_FLOW_S, 0});
    } else {
      const double sharing = 2 * c.buckets * n * n * c.servers * (sync.traits().synchronous ? 1 : ASYNCHRONOUS_SHARING);
      per_iteration.push_back(
          {"parameter-server flows", "/platform/parameter_servers", ps_flows * FLOW_S + sharing * SHARED_FLOW_S, 0});
    }
    flows += ps_flows;
  }
  if (s.training.graph) {
    const double peers = static_cast<double>(s.training.graph->out_peers(0, 0).size());
    const double messages = n * peers * (sync.events_unit().empty() ? 1.0 : std::max(1.0, c.layers));
    per_iteration.push_back({"point-to-point messages", "/training/sync/params", messages * MESSAGE_S, 0});
    flows += messages;
    wire_bytes += n * peers * w.plan.profile->grad_bytes();
  }
  if (s.network.fidelity == Fidelity::PACKET) {
    // ns-3 handles every segment and every ACK (one per two segments) at every hop of its path.
    const double segments = wire_bytes / s.network.packet.segment_bytes;
    const double packet_hops = segments * 1.5 * mean_hops(s.platform.graph);
    per_iteration.push_back({"ns-3 packets", "/network/packet/segment_bytes", packet_hops * PACKET_HOP_S, 0});
    events += packet_hops;
  }
}

/// Link traces: every repeating trace replays each entry once per period of simulated time,
/// however little happens meanwhile. Adds the term and the events; returns the wall time (a total
/// over the run, not per iteration).
double add_link_trace_term(const WorkPlan& w, const RunCounts& c, WorkEstimate& e) {
  const Scenario& s = w.scenario;
  if (s.network.link_traces.empty()) return 0;
  // The simulated time is bounded by every iteration's compute plus its all-reduces at the slowest
  // bandwidth a trace gives (transfers progress at least that fast): a bound, so that the count of
  // replayed entries is one too.
  double slowest_Bps = 1.0 / w.ab.beta_s_per_byte;
  for (const auto& trace : s.network.link_traces)
    for (const auto& [t, bandwidth] : trace.bandwidth_Bps) slowest_Bps = std::min(slowest_Bps, bandwidth);
  models::AlphaBeta slowest = w.ab;
  slowest.beta_s_per_byte = std::max(w.ab.beta_s_per_byte, 1.0 / slowest_Bps);
  double comm_s = 0;
  if (s.training.sync_model->traits().uses_collective)
    for (const auto& bucket : w.plan.buckets)
      comm_s += s.plan->gradient_collective(bucket.bytes).analytic_time_s(w.group, bucket.bytes, slowest);
  const double simulated_per_iteration_s = w.plan.profile->iteration_compute_s() + comm_s;
  double wall_s = 0, memory = 0, trace_events = 0, top = -1;
  std::string path = "/network/link_traces";
  for (std::size_t t = 0; t < s.network.link_traces.size(); ++t) {
    const auto& trace = s.network.link_traces[t];
    const double entries = static_cast<double>(trace.bandwidth_Bps.size() + trace.latency_s.size());
    const double per_iteration = trace.period_s > 0 ? entries * simulated_per_iteration_s / trace.period_s : 0;
    const double traced_links = trace.links.empty() ? c.links : static_cast<double>(trace.links.size());
    const double changes = per_iteration * c.iterations + entries;  // the first period's entries, repeating or not
    const double cost = s.network.fidelity == Fidelity::ANALYTIC ? changes * c.links * TRACE_SEGMENT_LINK_S
                                                                 : changes * traced_links * TRACE_EVENT_S;
    wall_s += cost;
    trace_events += s.network.fidelity == Fidelity::ANALYTIC ? changes : changes * traced_links;
    memory += s.network.fidelity == Fidelity::ANALYTIC ? changes * TRACE_SEGMENT_MEMORY
                                                       : changes * traced_links * TRACE_EVENT_MEMORY;
    if (cost > top) {
      top = cost;
      path = fmt::format("/network/link_traces/{}{}", t, trace.period_s > 0 ? "/period" : "");
    }
  }
  e.terms.push_back({"link-trace events", path, wall_s, memory});
  e.events += trace_events;
  e.trace_events = trace_events;
  return wall_s;
}

/// Outputs: iterations.csv and the timeline, written as the run goes (a CSV row's cost is in
/// WORKER_ITERATION_S on SimGrid, the "iterations.csv" term on the fiber lane).
void add_output_term(const WorkPlan& w, const RunCounts& c, WorkEstimate& e) {
  const Scenario& s = w.scenario;
  const double traced = std::min(c.iterations, static_cast<double>(s.output.timeline_iterations)) *
                        std::min(c.n, static_cast<double>(s.output.timeline_workers));
  const double timeline_events = s.output.timeline ? traced * (c.calls + c.buckets) : 0;
  e.csv_bytes = s.output.iterations_csv ? c.n * c.iterations * CSV_ROW_BYTES : 0;
  e.timeline_bytes = timeline_events * TIMELINE_EVENT_BYTES;
  e.output_bytes = e.csv_bytes + e.timeline_bytes;
  e.terms.push_back({"timeline", "/output/timeline_iterations", timeline_events * TIMELINE_EVENT_S, 0});
}

}  // namespace

WorkEstimate estimate_work(const WorkPlan& w) {
  const RunCounts c = count_run(w);
  WorkEstimate e;
  e.iterations = w.scenario.workload.iterations;
  e.simulated_workers = c.simulated;
  add_setup_terms(w, c, e);

  std::vector<WorkTerm> per_iteration;
  add_replay_terms(w, c, per_iteration);
  if (auto t = convergence_work_term(w.scenario, c.n, c.iterations, c.buckets, c.servers)) per_iteration.push_back(*t);
  double events = c.simulated * c.calls, flows = 0;
  add_communication_terms(w, c, per_iteration, events, flows);
  const double trace_wall_s = add_link_trace_term(w, c, e);
  e.events_per_iteration = events + flows;
  e.events += c.iterations * e.events_per_iteration;
  e.flows = c.iterations * flows;
  for (const auto& t : per_iteration) e.per_iteration_s += t.wall_s;
  add_output_term(w, c, e);

  e.wall_s = e.setup_s + c.iterations * e.per_iteration_s + e.terms.back().wall_s;
  e.wall_s += trace_wall_s;
  e.memory_bytes = BASE_MEMORY;
  for (const auto& t : e.terms) e.memory_bytes += t.memory_bytes;
  for (auto t : per_iteration) {
    e.memory_bytes += t.memory_bytes;
    t.wall_s *= c.iterations;
    e.terms.push_back(std::move(t));
  }
  return e;
}

}  // namespace ddlsim::sim
