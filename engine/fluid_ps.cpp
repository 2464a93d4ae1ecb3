#include "engine/fluid_ps.hpp"

#include "engine/context.hpp"
#include "engine/flow_bounds.hpp"
#include "scenario/push_pull_solver.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <xbt/config.hpp>

namespace ddlsim::sim::detail {
namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

}  // namespace

std::string FluidPs::ineligible(const Context& ctx, const std::vector<std::string>& engine_args) {
  if (auto why = push_pull_fluid_refusal(*ctx.scenario); !why.empty()) return why;
  return cm02_refusal(engine_args);
}

FluidPs::FluidPs(Context& ctx) : ctx_(ctx) {
  bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
  latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  const int workers = ctx.group.workers;
  const int servers = ctx.group.servers;
  channels_.resize(static_cast<std::size_t>(workers) * static_cast<std::size_t>(servers));
  inboxes_.resize(static_cast<std::size_t>(servers));
  // Every route now: each must cross exactly one server link (its hub), and no link may be a hub
  // on one route and a local link on another (ineligible() cannot see routes; the caller checks).
  for (int s = 0; s < servers; ++s)
    for (int w = 0; w < workers; ++w) {
      routes_.push_back(make_route(w, workers + s, true));
      routes_.push_back(make_route(workers + s, w, false));
    }
}

std::unique_ptr<FluidPs> FluidPs::create(Context& ctx, std::string& why) {
  std::unique_ptr<FluidPs> fluid;
  try {
    fluid = std::make_unique<FluidPs>(ctx);
  } catch (const RouteConflict&) {
    why = "a server's link lies on another route";
    return nullptr;
  }
  auto* self = fluid.get();
  sg4::Actor::create("ps-flows", ctx.platform.hosts.at(static_cast<std::size_t>(ctx.group.workers)), [self] { self->run(); })
      ->daemonize();
  return fluid;
}

FluidPs::Channel& FluidPs::channel(int server, int worker) {
  return channels_[static_cast<std::size_t>(server) * static_cast<std::size_t>(ctx_.group.workers) + static_cast<std::size_t>(worker)];
}

const FluidPs::Route& FluidPs::route(int server, int worker, bool push) const {
  return routes_[2 * (static_cast<std::size_t>(server) * static_cast<std::size_t>(ctx_.group.workers) + static_cast<std::size_t>(worker)) +
                 (push ? 0 : 1)];
}

FluidPs::Route FluidPs::make_route(int src_host, int dst_host, bool push) {
  std::vector<sg4::Link*> path;
  double latency = 0;
  ctx_.platform.hosts.at(static_cast<std::size_t>(src_host))->route_to(ctx_.platform.hosts.at(static_cast<std::size_t>(dst_host)), path, &latency);
  if (path.empty()) throw RouteConflict{};
  Route r;
  r.system = push ? 0 : 1;
  FluidLinks& links = systems_[r.system];
  r.min_bandwidth = INF;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const bool hub = push ? i + 1 == path.size() : i == 0;
    auto [it, fresh] = link_ids_.try_emplace(path[i], r.system, -1);
    if (fresh) it->second.second = links.add_link(path[i]->get_bandwidth(), hub);
    // A link seen before in the other role or system: the caller must not use the fluid links.
    if (it->second.first != r.system || links.is_hub(it->second.second) != hub) throw RouteConflict{};
    (hub ? r.flow.hub : r.flow.locals.emplace_back()) = it->second.second;
    r.min_bandwidth = std::min(r.min_bandwidth, path[i]->get_bandwidth());
  }
  r.flow.penalty = latency > 0 ? latency : 1.0;  // CM02: the route's latency; 1 while it has none
  r.flow.factor = bandwidth_factor_;
  r.latency_s = latency * latency_factor_;
  r.flow.bound = r.min_bandwidth;
  if (latency > 0) r.flow.bound = std::min(r.flow.bound, tcp_gamma_ / (2.0 * latency));
  return r;
}

void FluidPs::push(int worker, int server, PsMessage* msg, std::uint64_t units, double rate_units, Waiter* waiter) {
  catch_up(sg4::Engine::get_clock());
  channel(server, worker).pushes.push_back(Send{msg, units, rate_units, waiter});
  match_push(server, worker);
}

void FluidPs::post_receive(int server, int worker) {
  catch_up(sg4::Engine::get_clock());
  auto& ch = channel(server, worker);
  ch.receive_posted = true;
  ch.receive_seq = inboxes_[static_cast<std::size_t>(server)].next_seq++;
  match_push(server, worker);
}

void FluidPs::match_push(int server, int worker) {
  auto& ch = channel(server, worker);
  if (!ch.receive_posted || ch.pushes.empty()) return;
  Transfer t;
  t.push = true;
  t.server = server;
  t.worker = worker;
  t.send = ch.pushes.front();
  t.receive_seq = ch.receive_seq;
  ch.pushes.pop_front();
  ch.receive_posted = false;
  begin(std::move(t));
}

void FluidPs::pull(int server, int worker, PsMessage* msg, std::uint64_t units, double rate_units) {
  catch_up(sg4::Engine::get_clock());
  channel(server, worker).pulls.push_back(Send{msg, units, rate_units, nullptr});
  match_pulls(server, worker);
}

void FluidPs::receive_pull(int worker, int server, PsMessage** slot, Waiter* waiter) {
  catch_up(sg4::Engine::get_clock());
  channel(server, worker).pull_receives.push_back(PullReceive{slot, waiter});
  match_pulls(server, worker);
}

void FluidPs::match_pulls(int server, int worker) {
  auto& ch = channel(server, worker);
  while (!ch.pulls.empty() && !ch.pull_receives.empty()) {
    Transfer t;
    t.push = false;
    t.server = server;
    t.worker = worker;
    t.send = ch.pulls.front();
    t.receive = ch.pull_receives.front();
    ch.pulls.pop_front();
    ch.pull_receives.pop_front();
    begin(std::move(t));
  }
}

void FluidPs::begin(Transfer t) {
  const Route& r = route(t.server, t.worker, t.push);
  t.flow = r.flow;
  t.system = r.system;
  t.flow.units = static_cast<double>(t.send.units);
  // CM02's user bound: the flow's own rate over the bandwidth factor, if below the route's.
  if (t.send.rate_units > 0) t.flow.bound = std::min(t.flow.bound, t.send.rate_units / bandwidth_factor_);
  const double now = sg4::Engine::get_clock();
  t.order = next_order_++;
  if (r.latency_s > 0) {
    pending_.emplace(std::make_pair(now + r.latency_s, t.order), std::move(t));
  } else {
    const auto id = static_cast<std::size_t>(systems_[t.system].start(t.flow, now));
    auto& slots = flowing_[t.system];
    if (slots.size() <= id) slots.resize(id + 1);
    slots[id] = std::move(t);
  }
  wake();
}

void FluidPs::catch_up(double now) {
  while (true) {
    const double ends = std::min(systems_[0].next_completion(), systems_[1].next_completion());
    const double starts = pending_.empty() ? INF : pending_.begin()->first.first;
    // due within a rounding: the actor's timed wait ends at now + (next - now)
    if (std::min(ends, starts) > now + 1e-12 * std::max(1.0, now)) break;
    if (ends <= starts) {
      std::vector<Transfer> ended;
      for (int system = 0; system < 2; ++system)
        for (const auto id : systems_[system].advance(ends)) {
          ended.push_back(std::move(flowing_[system][static_cast<std::size_t>(id)]));
        }
      std::sort(ended.begin(), ended.end(), [](const Transfer& a, const Transfer& b) { return a.order < b.order; });
      for (const auto& t : ended) deliver(t);
    } else {
      // every flow whose latency ends at this instant, then one settling of the sharing
      while (!pending_.empty() && pending_.begin()->first.first == starts) {
        auto node = pending_.extract(pending_.begin());
        const int system = node.mapped().system;
        const auto id = static_cast<std::size_t>(systems_[system].start(node.mapped().flow, starts));
        auto& slots = flowing_[system];
        if (slots.size() <= id) slots.resize(id + 1);
        slots[id] = std::move(node.mapped());
      }
    }
  }
}

void FluidPs::deliver(const Transfer& t) {
  if (t.push) {
    auto& inbox = inboxes_[static_cast<std::size_t>(t.server)];
    if (inbox.waiting && inbox.first == nullptr) {
      inbox.first = t.send.msg;
      inbox.arrived->release();
    } else {
      inbox.ended.push({t.receive_seq, t.send.msg});
    }
    if (--t.send.waiter->outstanding == 0) t.send.waiter->done->release();
  } else {
    *t.receive.slot = t.send.msg;
    if (--t.receive.waiter->outstanding == 0) t.receive.waiter->done->release();
  }
}

PsMessage* FluidPs::take_push(int server) {
  catch_up(sg4::Engine::get_clock());
  auto& inbox = inboxes_[static_cast<std::size_t>(server)];
  if (inbox.ended.empty()) {
    inbox.waiting = true;
    inbox.arrived->acquire();
    inbox.waiting = false;
    PsMessage* first = inbox.first;
    inbox.first = nullptr;
    return first;
  }
  PsMessage* msg = inbox.ended.top().second;
  inbox.ended.pop();
  return msg;
}

void FluidPs::wake() {
  if (sleeping_ && !woken_) {
    woken_ = true;
    wake_->release();
  }
}

void FluidPs::run() {
  while (true) {
    const double now = sg4::Engine::get_clock();
    catch_up(now);
    const double next = std::min({systems_[0].next_completion(), systems_[1].next_completion(),
                                  pending_.empty() ? INF : pending_.begin()->first.first});
    sleeping_ = true;
    woken_ = false;
    if (next == INF) {
      wake_->acquire();
    } else if (!wake_->acquire_timeout(std::max(0.0, next - now))) {
      // woken by a new flow: plan again
    }
    sleeping_ = false;
  }
}

}  // namespace ddlsim::sim::detail

namespace ddlsim::sim::detail {
FluidLinks::Stats FluidPs::stats() const {
  FluidLinks::Stats total;
  for (const auto& system : systems_) {
    total.events += system.stats().events;
    total.explicit_events += system.stats().explicit_events;
    total.switches += system.stats().switches;
  }
  return total;
}
}  // namespace ddlsim::sim::detail
