#include "sim/schedule_executor.hpp"

#include <algorithm>
#include <cmath>
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
  return lat;
}

void ScheduleExecutor::run(int rank, const std::vector<models::RankStep>& steps, TrafficCounters& counters,
                           const std::vector<int>* members) {
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> inbox;
  for (const auto& step : steps) {
    comms.clear();
    inbox.assign(step.ops.size(), nullptr);
    double step_latency = 0;
    for (std::size_t i = 0; i < step.ops.size(); ++i) {
      const auto& op = step.ops[i];
      const int peer = members != nullptr ? (*members)[static_cast<std::size_t>(op.peer)] : op.peer;
      if (op.kind == models::RankOp::Kind::SEND) {
        const auto units = static_cast<std::uint64_t>(std::llround(op.bytes * BYTE_SCALE));
        comms.push_back(mailbox(rank, peer)->put_async(&payload_token, units));
        counters.bytes_sent += op.bytes;
        counters.messages_sent += step.latency_steps;
        ++counters.flows;
      } else {
        comms.push_back(mailbox(peer, rank)->get_async(&inbox[i]));
      }
      if (step.latency_steps > 1) step_latency = std::max(step_latency, latency(rank, peer));
    }
    sg4::Comm::wait_all(comms);
    if (step.latency_steps > 1) sg4::this_actor::sleep_for((step.latency_steps - 1) * step_latency);
  }
}

TrafficCounters schedule_traffic(const std::vector<models::RankStep>& steps) {
  TrafficCounters c;
  for (const auto& step : steps)
    for (const auto& op : step.ops)
      if (op.kind == models::RankOp::Kind::SEND) {
        c.bytes_sent += op.bytes;
        c.messages_sent += step.latency_steps;
      }
  return c;
}

}  // namespace ddlsim::sim
