// ddlsim: sections of the scenario loader that live in their own files (scenario/scenario.cpp
// reads the document in order: platform, network, workload, training, output).
#pragma once

#include "scenario/scenario.hpp"

namespace ddlsim::sim {

/// "platform": the topology built for the workers and servers, its links in range
/// (scenario/scenario_platform.cpp).
void read_platform(ObjectReader& root, Scenario& s);

/// "training.stragglers": per-rank compute-time factors and noise (scenario/scenario_stragglers.cpp).
StragglerSpec read_stragglers(ObjectReader& r, int workers);

}  // namespace ddlsim::sim
