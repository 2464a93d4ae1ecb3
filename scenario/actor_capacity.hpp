// ddlsim: how many SimGrid actors this process can still create, known before any engine exists.
//
// Each actor's stack is one memory mapping (two with SimGrid's stack guard page), and a process
// may hold vm.max_map_count mappings: past that SimGrid aborts ("Failed to protect stack").
// EngineSession::reserve_actors (engine/engine.cpp) turns guard pages off when only that makes a
// run's actors fit; the commands call check_actor_room first, to refuse what cannot fit even
// without guard pages at the option or JSON path that asks for the actors.
#pragma once

#include <string>

namespace ddlsim::sim {

struct ActorRoom {
  long limit = 0;      // vm.max_map_count
  long available = 0;  // the limit less the mappings in use and a margin (as reserve_actors counts)
};
ActorRoom actor_room();

/// One group of actors a run creates: `count` things (workers, ranks, servers) of `per_each`
/// actors each, asked for at `path`.
struct ActorDemand {
  std::string path;  // "--workers", "/platform/parameter_servers"
  std::string noun;  // "ranks", "parameter servers"
  long count = 0;
  long per_each = 1;
};

/// Throws ConfigError when `a` and `b` together need more actors than `room` holds without guard
/// pages, at the path of the larger demand, naming the limit, how many of it fit beside the other,
/// `alternative` (what runs without actors; empty: nothing) and the sysctl that raises the limit.
void check_actor_room(const ActorDemand& a, const ActorDemand& b, const std::string& alternative,
                      const ActorRoom& room = actor_room());

}  // namespace ddlsim::sim
