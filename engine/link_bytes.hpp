// ddlsim: the bytes each link direction carried (links.csv), counted from the flows themselves.
//
// SimGrid's link-load plugin integrates a link's usage, which is the flows' rates before CM02's
// bandwidth factor scales them (it read 2 x the bytes at factor 0.5), and it integrates from one
// flow event to the next at the usage found at the later one, so a flow's latency phase counted
// as if it were sending (a 2 KiB message over 50 us links read 64 KB). Every flow ddlsim starts
// instead adds its wire bytes (payload / the library's protocol efficiency) to each link half on
// its route, when it starts.
#pragma once

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace ddlsim::sim {

class LinkBytes {
 public:
  /// Forgets every count (one run per engine).
  static void reset();
  /// A flow of `wire_bytes` from `src` to `dst` started.
  static void add(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, double wire_bytes);
  /// The bytes the link half carried.
  [[nodiscard]] static double of(const simgrid::s4u::Link* link);
};

}  // namespace ddlsim::sim
