#include "sim/engine.hpp"

#include "sim/schedule_executor.hpp"

#include <fmt/format.h>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

void configure_network(sg4::Engine& engine, const NetworkSpec& net) {
  // SimGrid 3.32's default lazy action update ("Lazy") finishes some flows too
  // early when a new flow starts after a finished flow on a link with latency
  // > 0: a parameter server's pulls over heterogeneous links completed faster
  // than their links allow (tests/sim/correctness_test.cpp). "Full" recomputes
  // every action's share at every event and is exact; measured at most ~17 %
  // slower on our flow scenarios (docs/architecture.md).
  engine.set_config("network/optim:Full");
  switch (net.model) {
    case NetworkModel::IDEAL:
      engine.set_config("network/model:CM02");
      engine.set_config("network/crosstraffic:0");
      engine.set_config("network/TCP-gamma:0");
      break;
    case NetworkModel::CALIBRATED:
      engine.set_config("network/model:CM02");
      engine.set_config("network/crosstraffic:0");
      engine.set_config("network/TCP-gamma:0");
      engine.set_config(fmt::format("network/latency-factor:{}", net.latency_factor));
      engine.set_config(fmt::format("network/bandwidth-factor:{}", net.bandwidth_factor));
      break;
    case NetworkModel::TCP:
      engine.set_config("network/model:LV08");
      // Window and weight are in bytes: rescale them to payload units.
      engine.set_config(fmt::format("network/TCP-gamma:{}", 4194304.0 * BYTE_SCALE));
      engine.set_config(fmt::format("network/weight-S:{}", 20537.0 * BYTE_SCALE));
      break;
  }
}

}  // namespace

EngineSession::EngineSession(const std::vector<std::string>& engine_args, const NetworkSpec& network) {
  xbt_log_control_set("root.thres:warning");
  args_.emplace_back("ddlsim");
  args_.insert(args_.end(), engine_args.begin(), engine_args.end());
  for (auto& a : args_) argv_.push_back(a.data());
  int argc = static_cast<int>(argv_.size());
  engine_ = std::make_unique<sg4::Engine>(&argc, argv_.data());
  configure_network(*engine_, network);
  auto flag = deadlock_;
  sg4::Engine::on_deadlock_cb([flag]() { *flag = true; });
}

}  // namespace ddlsim::sim
