// ddlsim: "auto" under a compressor whose buckets are not summed -- resolved when the scenario is
// loaded (scenario/scenario_compression.cpp), per call by closed forms.
//
// A gathering compressor (topk, dgc, ...; Aggregation::GATHER) is all-gathered: "auto" then picks,
// per call, the all-gather with the smallest closed form. Under AR-Topk (Aggregation::ARTOPK) "auto"
// follows seed 002's alpha-beta inequalities (models/artopk_choice.hpp): AR-Topk over a ring, over a
// tree, or the all-gather of every worker's top-k (Bruck's, 2 M_c per worker).
#pragma once

#include "models/collective.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::models {

/// "auto" among `candidates` (name, all-gather): per call, the one with the smallest closed form.
std::unique_ptr<Collective> make_cheapest_allgather(std::vector<std::pair<std::string, std::unique_ptr<Collective>>> candidates);

/// "auto" under AR-Topk: AR-Topk's ring, its tree, or the all-gather of every worker's top-k.
std::unique_ptr<Collective> make_artopk_auto();

}  // namespace ddlsim::models
