#include "engine/link_bytes.hpp"

#include "engine/context.hpp"

#include <unordered_map>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

struct PairHash {
  std::size_t operator()(const std::pair<const sg4::Host*, const sg4::Host*>& p) const {
    return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
  }
};

struct LinkBytesState {
  // per route, its links' counts (elements of `bytes`, whose nodes never move): one lookup per flow
  std::unordered_map<std::pair<const sg4::Host*, const sg4::Host*>, std::vector<double*>, PairHash> routes;
  std::unordered_map<const sg4::Link*, double> bytes;
};

LinkBytesState& link_bytes_state() {
  static LinkBytesState s;
  return s;
}

}  // namespace

void LinkBytes::reset() {
  link_bytes_state().routes.clear();
  link_bytes_state().bytes.clear();
}

void LinkBytes::add(sg4::Host* src, sg4::Host* dst, double wire_bytes) {
  auto& s = link_bytes_state();
  auto [it, fresh] = s.routes.try_emplace({src, dst});
  if (fresh) {
    std::vector<sg4::Link*> links;
    double latency = 0;
    src->route_to(dst, links, &latency);
    for (const auto* link : links) it->second.push_back(&s.bytes[link]);
  }
  for (double* count : it->second) *count += wire_bytes;
}

double LinkBytes::of(const sg4::Link* link) {
  const auto it = link_bytes_state().bytes.find(link);
  return it == link_bytes_state().bytes.end() ? 0.0 : it->second;
}

}  // namespace ddlsim::sim

namespace ddlsim::sim::detail {

std::uint64_t wire_units(const Context& ctx, int src, int dst, double bytes) {
  const auto& software = ctx.scenario->network.software;
  const double wire = software ? bytes / software->protocol_efficiency : bytes;
  LinkBytes::add(ctx.platform.hosts.at(static_cast<std::size_t>(src)), ctx.platform.hosts.at(static_cast<std::size_t>(dst)),
                 wire);
  return units_of(wire);
}

LinkHalves link_halves(const platforms::EmittedPlatform& platform) {
  LinkHalves halves;
  halves.up = platform.up;
  for (const auto* link : platform.links)
    for (const bool up : {true, false}) {
      const auto* half = sg4::Link::by_name_or_null(link->get_name() + (up ? "_UP" : "_DOWN"));
      (up ? halves.up_bytes : halves.down_bytes)
          .push_back(half != nullptr ? std::optional<double>(LinkBytes::of(half)) : std::nullopt);
    }
  return halves;
}

}  // namespace ddlsim::sim::detail
