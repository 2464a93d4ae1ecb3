// ddlsim: flows follow their links' traced bandwidth (docs/scenario.md, "link_traces").
//
// SimGrid 3.32's CM02 gives every flow a rate bound when it starts: the slowest bandwidth on its
// route at that moment, or its own rate cap if lower (NetworkCm02Model::comm_action_set_bounds,
// src/surf/network_cm02.cpp). A bandwidth profile event changes the link's capacity
// (NetworkCm02Link::set_bandwidth) but never that bound, so a flow started while a traced link was
// slow kept the slow rate after the link sped up (a 200 MB ring step started at 1 Gbps took 0.88 s
// where 0.25 s is right). The bound from the route is redundant with the links' own capacity
// constraints, which SimGrid does update; so at every bandwidth change every running flow's bound
// is reset to what it is once the route's share is left to those constraints: the flow's own rate
// cap (software costs, engine/schedule_executor.cpp), or none. The loader refuses bandwidth traces with
// the `tcp` model, whose LV08 bound also holds a TCP window computed from the start's latency.
#pragma once

#include "scenario/scenario.hpp"

#include <simgrid/s4u/Comm.hpp>

#include <string>
#include <vector>

namespace ddlsim::sim {

class FlowBounds {
 public:
  /// Follows bandwidth changes in this process's engine when `network` traces a bandwidth; refuses
  /// (ConfigError) what it cannot follow exactly. Call once the engine is configured.
  static void install(const NetworkSpec& network);
  /// A started flow's own rate cap, in SimGrid units per second (what Comm::set_rate was given).
  static void note_rate(const simgrid::s4u::Comm& comm, double rate_units);
  /// The flow has ended: forget its cap.
  static void forget(const simgrid::s4u::Comm& comm);
  /// True while bandwidth changes are followed (note_rate needed).
  static bool active();
};

/// Why SimGrid's network configuration (set by the engine session) is not CM02's plain sharing, or
/// "": a model other than CM02, cross traffic, a weight-S, or a --cfg=network/ option of the user's.
/// The solvers that compute CM02's rates themselves (engine/fluid_ps.hpp, engine/stepwise_replay.hpp)
/// run only where this is "".
std::string cm02_refusal(const std::vector<std::string>& engine_args);

}  // namespace ddlsim::sim
