#include "engine/schedule_executor.hpp"

#include "engine/flow_bounds.hpp"
#include "engine/link_bytes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <fmt/format.h>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {
int payload_token = 0;  // mailboxes refuse null payloads
}

sg4::Mailbox* ScheduleExecutor::mailbox(int src, int dst) {
  auto& mb = mailboxes_[key(src, dst)];
  if (mb == nullptr) mb = sg4::Mailbox::by_name(fmt::format("{}>{}", src, dst));
  return mb;
}

double ScheduleExecutor::latency(int src, int dst) {
  auto it = latencies_.find(key(src, dst));
  if (it != latencies_.end()) return it->second;
  std::vector<sg4::Link*> links;
  double lat = 0;
  hosts_.at(static_cast<std::size_t>(src))->route_to(hosts_.at(static_cast<std::size_t>(dst)), links, &lat);
  latencies_[key(src, dst)] = lat;
  routes_[key(src, dst)] = std::move(links);
  return lat;
}

double ScheduleExecutor::beta(int src, int dst) {
  (void)latency(src, dst);  // fills the route
  double slowest = std::numeric_limits<double>::infinity();
  for (const auto* link : routes_[key(src, dst)]) slowest = std::min(slowest, link->get_bandwidth());
  if (!std::isfinite(slowest) || slowest <= 0) return 0.0;
  return BYTE_SCALE / (slowest * network_.bandwidth_factor);
}

void ScheduleExecutor::run(int rank, models::StepSource& source, TrafficCounters& counters,
                           const std::vector<int>* members) {
  const models::SoftwareCost* software =
      network_.software && !network_.software->ideal() ? network_.software.get() : nullptr;
  const double efficiency = software != nullptr ? software->protocol_efficiency : 1.0;
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> inbox;
  models::RankStep step;
  while (source.next(step)) {
    comms.clear();
    inbox.assign(step.ops.size(), nullptr);
    const int k = step.latency_steps;
    double delay = 0;  // what the rank sleeps once the step's transfers are done
    for (std::size_t i = 0; i < step.ops.size(); ++i) {
      const auto& op = step.ops[i];
      const int peer = members != nullptr ? (*members)[static_cast<std::size_t>(op.peer)] : op.peer;
      const int src = op.kind == models::RankOp::Kind::SEND ? rank : peer;
      const int dst = op.kind == models::RankOp::Kind::SEND ? peer : rank;
      double rate_cap = -1;  // payload bytes per second; < 0: none
      if (software != nullptr || k > 1) {
        const double alpha = latency(src, dst) * network_.latency_factor;
        double extra = 0;
        if (software != nullptr) {
          const auto m = software->message(op.bytes / k, alpha, beta(src, dst));
          extra = software->send_overhead_s + software->recv_overhead_s + m.latency_s - alpha;
          if (m.per_byte_s > m.wire_per_byte_s) rate_cap = 1.0 / m.per_byte_s;
        }
        delay = std::max(delay, k * extra + (k - 1) * alpha);
      }
      if (op.kind == models::RankOp::Kind::SEND) {
        const auto units = static_cast<std::uint64_t>(std::llround(op.bytes / efficiency * BYTE_SCALE));
        auto comm = mailbox(rank, peer)->put_init(&payload_token, units);
        if (rate_cap > 0) comm->set_rate(rate_cap / efficiency * BYTE_SCALE);
        comms.push_back(comm->start());
        LinkBytes::add(hosts_.at(static_cast<std::size_t>(src)), hosts_.at(static_cast<std::size_t>(dst)),
                       op.bytes / efficiency);
        if (rate_cap > 0) FlowBounds::note_rate(*comm, rate_cap / efficiency * BYTE_SCALE);
        counters.bytes_sent += op.bytes;
        counters.messages_sent += k;
        ++counters.flows;
      } else {
        comms.push_back(mailbox(peer, rank)->get_async(&inbox[i]));
      }
    }
    sg4::Comm::wait_all(comms);
    if (FlowBounds::active())
      for (const auto& c : comms) FlowBounds::forget(*c);
    if (delay > 0) sg4::this_actor::sleep_for(delay);
  }
}

}  // namespace ddlsim::sim
