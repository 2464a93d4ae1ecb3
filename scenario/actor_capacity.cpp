#include "scenario/actor_capacity.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>

namespace ddlsim::sim {

ActorRoom actor_room() {
  ActorRoom room;
  room.limit = 65530;
  {
    std::ifstream in("/proc/sys/vm/max_map_count");
    long v = 0;
    if (in >> v) room.limit = v;
  }
  long in_use = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) ++in_use;
  // The headroom EngineSession::reserve_actors keeps for what the run maps besides stacks.
  room.available = room.limit - in_use - 1000 - room.limit / 50;
  return room;
}

void check_actor_room(const ActorDemand& a, const ActorDemand& b, const std::string& alternative,
                      const ActorRoom& room) {
  const long actors = a.count * a.per_each + b.count * b.per_each;
  if (actors <= room.available) return;
  const bool a_larger = a.count * a.per_each >= b.count * b.per_each;
  const ActorDemand& big = a_larger ? a : b;
  const ActorDemand& other = a_larger ? b : a;
  const long fit = std::max(0L, (room.available - other.count * other.per_each) / big.per_each);
  const std::string beside =
      other.count > 0 ? fmt::format(" beside the {} {} ({} actors)", other.count, other.noun, other.count * other.per_each)
                      : "";
  throw ConfigError(big.path,
                    fmt::format("{} {} need {} SimGrid actors{}, one stack mapping each, but a process may hold {} memory "
                                "mappings here (vm.max_map_count): at most {} {} fit{}{}; raise the limit as root with "
                                "`sysctl -w vm.max_map_count={}`",
                                big.count, big.noun, big.count * big.per_each,
                                other.count > 0 ? fmt::format(" ({} in all)", actors) : "", room.limit, fit, big.noun,
                                beside, alternative.empty() ? "" : " (" + alternative + ")",
                                (actors + 2000 + room.limit / 50) * 2));
}

}  // namespace ddlsim::sim
