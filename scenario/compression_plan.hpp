// ddlsim: the per-bucket compression plan -- what each bucket's collective carries under the
// scenario's compressor, and its encode and decode seconds (computed once, when a run is planned).
#pragma once

#include "models/compressor.hpp"
#include "models/sync_model.hpp"
#include "scenario/scenario.hpp"

#include <vector>

namespace ddlsim::sim {

/// Per bucket under the scenario's compressor: the bytes its collective carries (a gathering
/// compressor's all-gather: every worker's wire bytes), encode and decode seconds (a gathered
/// bucket decodes every worker's encoding). Empty without a compressor.
std::vector<models::BucketCompression> compress_buckets(const Scenario& scenario, const std::vector<models::Bucket>& buckets);
/// The same for compressor `comp` (adaptive compression: the scenario's at one candidate ratio).
std::vector<models::BucketCompression> compress_buckets(const Scenario& scenario, const models::Compressor& comp,
                                                        const std::vector<models::Bucket>& buckets);

/// Per iteration, the worker whose top-k indices the others follow under AR-Topk
/// (models/artopk_choice.hpp: artopk_root, by the compressor's "selection"); empty for every other
/// compressor, whose collectives run unrotated.
std::vector<int> selecting_workers(const Scenario& scenario);

/// The fraction of the buckets' gradient elements `comp` sends (k/n).
double kept_fraction(const models::Compressor& comp, const std::vector<models::Bucket>& buckets);

}  // namespace ddlsim::sim
