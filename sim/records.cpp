// ddlsim: results derived from the records once the run is over.
#include "sim/context.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <simgrid/plugins/load.h>

namespace ddlsim::sim::detail {


void compute_straggler_wait(SimulationResult& result) {
  if (result.workers.empty()) return;
  for (auto& w : result.workers)
    for (auto& it : w.iterations)
      for (double h : it.held) it.staleness_wait_s += h;
  const std::size_t iterations = result.workers.front().iterations.size();
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::size_t buckets = result.workers.front().iterations[it].arrivals.size();
    for (std::size_t b = 0; b < buckets; ++b) {
      double last = -1;
      for (const auto& w : result.workers)
        if (it < w.iterations.size()) last = std::max(last, w.iterations[it].arrivals[b]);
      for (auto& w : result.workers)
        if (it < w.iterations.size() && w.iterations[it].arrivals[b] >= 0)
          w.iterations[it].straggler_wait_s += last - w.iterations[it].arrivals[b];
    }
  }
}

void collect_links(SimulationResult& result, const platforms::Topology& topo, const platforms::EmittedPlatform& platform) {
  const auto& g = topo.graph;
  std::size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    const auto* link = platform.links[i];
    const auto [from, to] = platform.up[i++];
    for (const bool up : {true, false}) {
      const auto* half = sg4::Link::by_name_or_null(link->get_name() + (up ? "_UP" : "_DOWN"));
      if (half == nullptr) continue;
      LinkRecord rec;
      rec.name = up ? g[from].name + ">" + g[to].name : g[to].name + ">" + g[from].name;
      rec.bandwidth_Bps = g[e].bandwidth_Bps;
      rec.bytes = sg_link_get_cum_load(half) / BYTE_SCALE;
      rec.utilization = result.makespan_s > 0 ? rec.bytes / (rec.bandwidth_Bps * result.makespan_s) : 0;
      result.links.push_back(rec);
    }
  }
  std::sort(result.links.begin(), result.links.end(),
            [](const LinkRecord& a, const LinkRecord& b) { return a.name < b.name; });
}

}  // namespace ddlsim::sim::detail
