// ddlsim: `ddlsim list`: every name a scenario can give -- the registries (topologies, sync models,
// collectives, compressors), the software presets and the fixed choices (bucketing policies,
// logical graphs, routings, network models, fidelities, granularities, straggler noise) --
// each with the JSON path that takes it and one line about it.
#pragma once

namespace ddlsim::sim {

void print_lists();

}  // namespace ddlsim::sim
