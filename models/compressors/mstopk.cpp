// mstopk: multi-sampling top-k (seed 002, after Shi et al., "Towards scalable
// distributed training of deep learning on public cloud clusters", MLSys 2021): the
// threshold for k = ceil(ratio n) is found by a few rounds of sampling-based search
// instead of a sort; the wire carries the kept fp32 values with int32 indices (8k bytes).
// Gathered.
#include "models/compressor.hpp"

DDLSIM_REGISTER(ddlsim::models::Compressor, "mstopk", "multi-sampling top-k threshold search (seed 002, Shi 2021): k values + int32 indices; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::SparseCompressor>(ddlsim::models::read_sparse_params(params, 0.01));
                })
