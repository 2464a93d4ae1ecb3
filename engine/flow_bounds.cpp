#include "engine/flow_bounds.hpp"

#include "models/error.hpp"

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <string>
#include <unordered_map>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

struct BoundsState {
  bool active = false;
  double bandwidth_factor = 1;  // SimGrid divides a flow's rate cap by it (comm_action_set_bounds)
  std::unordered_map<const void*, double> rates;  // a flow's CommImpl -> its own rate cap (units/s)
};

BoundsState& bounds_state() {
  static BoundsState s;
  return s;
}

/// Every running network flow's bound as CM02 would set it were the route's bandwidth left to the
/// links' capacity constraints: the flow's own cap over the bandwidth factor, or none (-1).
void reset_bounds() {
  auto& s = bounds_state();
  if (!s.active) return;
  for (auto* model : sg4::Engine::get_instance()->get_all_models()) {
    if (model->get_name().rfind("Network_", 0) != 0) continue;
    for (auto& action : *model->get_started_action_set()) {
      double bound = -1;
      if (const auto it = s.rates.find(action.get_activity()); it != s.rates.end()) bound = it->second / s.bandwidth_factor;
      if (action.get_user_bound() == bound) continue;
      action.set_user_bound(bound);
      action.set_bound(bound);
    }
  }
}

}  // namespace

void FlowBounds::install(const NetworkSpec& network) {
  bool traced = false;
  for (const auto& trace : network.link_traces) traced = traced || !trace.bandwidth_Bps.empty();
  auto& s = bounds_state();
  s.active = false;
  s.rates.clear();
  if (!traced) return;
  // Full update (engine/engine.cpp) recomputes every flow at every event; the lazy update keeps a
  // heap of completion dates that a changed bound would leave stale.
  if (simgrid::config::get_value<std::string>("network/optim") != "Full")
    throw ConfigError("/network/link_traces",
                      "bandwidth traces need SimGrid's full action update (network/optim:Full, the default here); "
                      "drop --cfg=network/optim");
  s.active = true;
  s.bandwidth_factor = network.model == NetworkModel::CALIBRATED ? network.bandwidth_factor : 1.0;
  static const bool connected = [] {
    sg4::Link::on_bandwidth_change_cb([](const sg4::Link&) { reset_bounds(); });
    return true;
  }();
  (void)connected;
}

bool FlowBounds::active() { return bounds_state().active; }

void FlowBounds::note_rate(const sg4::Comm& comm, double rate_units) {
  if (bounds_state().active) bounds_state().rates[comm.get_impl()] = rate_units;
}

void FlowBounds::forget(const sg4::Comm& comm) {
  if (bounds_state().active) bounds_state().rates.erase(comm.get_impl());
}

std::string cm02_refusal(const std::vector<std::string>& engine_args) {
  for (const auto& arg : engine_args)
    if (arg.rfind("--cfg=network/", 0) == 0) return "SimGrid option " + arg;
  if (simgrid::config::get_value<std::string>("network/model") != "CM02" ||
      simgrid::config::get_value<bool>("network/crosstraffic") || simgrid::config::get_value<double>("network/weight-S") != 0)
    return "SimGrid's network model is not CM02 without cross traffic";
  return {};
}

}  // namespace ddlsim::sim
