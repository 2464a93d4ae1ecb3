// ddlsim: adaptive compression in a run, and the network "auto" picks with per iteration.
#include "engine/context.hpp"
#include "engine/lazy_runtime.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::sim::detail {

int adaptive_variant(Context& ctx, int iteration, double now_s) {
  auto& a = *ctx.adaptive;
  const auto i = static_cast<std::size_t>(iteration);
  if (i >= a.decisions.size() && a.controller.choice_point(iteration)) {
    // The choice needs every worker's report of the explored iterations: wait for all of them
    // (under BSP they are a decode and an optimizer step apart at most).
    ctx.adaptive_barrier->wait();
    now_s = sg4::Engine::get_clock();
  }
  if (i >= a.decisions.size()) {
    const auto& ab = ctx.network->at(now_s);
    a.probes.push_back(ab);
    a.decisions.push_back(a.controller.decide(iteration, models::NetworkProbe{ab.alpha_s, ab.beta_s_per_byte}));
  }
  return a.decisions.at(i).candidate;
}

const models::AlphaBeta& RunState::resolution_ab(int iteration, double t) {
  if (adaptive) return adaptive->probes.at(static_cast<std::size_t>(iteration));
  if (network->constant()) return ab;
  if (analytic()) return network->at(t);
  return iteration_ab.try_emplace(iteration, network->at(t)).first->second;
}

const models::CollectiveGroup& RunState::resolution_group(int iteration, double t) {
  if (network->constant() || !group.network_cost) return group;
  const double at = analytic() ? t : iteration_pick_s.try_emplace(iteration, t).first->second;
  const auto& topo = network->traced_topology(at);
  std::vector<double> values;
  for (auto e : boost::make_iterator_range(boost::edges(topo.graph))) {
    values.push_back(topo.graph[e].bandwidth_Bps);
    values.push_back(topo.graph[e].latency_s);
  }
  auto& slot = traced_groups[values];
  if (!slot)
    slot = std::make_unique<models::CollectiveGroup>(make_collective_group(
        topo, !stepwise(), scenario->platform.routing, scenario->seed, scenario->network.software));
  return *slot;
}

const models::Collective& RunState::gradient_collective(int iteration, double t, double bytes) {
  if (!adaptive && network->constant()) return scenario->plan->gradient_collective(bytes);
  const models::AlphaBeta pick = resolution_ab(iteration, t);  // a copy: resolution_group may extend the network
  const auto& group = resolution_group(iteration, t);
  return models::resolve(*scenario->training.collective_algorithm, group, bytes, pick);
}

const models::Collective& RunState::request_collective(const models::CommRequest& request, int iteration, double t) {
  if (request.kind == models::CommRequest::Kind::ALLGATHER) return *plan.all_gather;
  if (request.kind == models::CommRequest::Kind::REDUCE_SCATTER) return *plan.reduce_scatter;
  return gradient_collective(iteration, t, request.bytes);
}

std::string RunState::request_collective_name(const models::CommRequest& request, int iteration, double t) {
  if (request.kind == models::CommRequest::Kind::ALLGATHER) return "ring_allgather";
  if (request.kind == models::CommRequest::Kind::REDUCE_SCATTER) return "ring_reduce_scatter";
  return gradient_collective_name(iteration, t, request.bytes);
}

std::string RunState::gradient_collective_name(int iteration, double t, double bytes) {
  if (!adaptive && network->constant()) return scenario->plan->gradient_collective_name(bytes);
  const models::AlphaBeta pick = resolution_ab(iteration, t);
  const auto& group = resolution_group(iteration, t);
  return collective_name(*this, group, bytes, pick);
}

void RunState::note_collective(int iteration, const std::string& name) {
  if (iteration < records.first) throw std::logic_error(fmt::format("iteration {} ran a collective after it completed", iteration));
  auto& c = records.collectives[iteration];
  // Distinct names in the order the buckets first ran them.
  std::size_t from = 0;
  while (from <= c.size()) {
    const auto to = std::min(c.find('+', from), c.size());
    if (c.compare(from, to - from, name) == 0 && to - from == name.size()) return;
    from = to + 1;
  }
  c += (c.empty() ? "" : "+") + name;
}

}  // namespace ddlsim::sim::detail
