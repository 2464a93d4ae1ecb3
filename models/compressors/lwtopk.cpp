// lwtopk: layer-wise top-k with threshold estimation (seed 002, Tyagi & Swany, IEEE
// BigData 2023, after GraVAC's layer-wise compression): the threshold for k = ceil(ratio n)
// is estimated per layer instead of sorting the whole bucket; the wire carries the kept
// fp32 values with int32 indices (8k bytes). Gathered.
#include "models/compressor.hpp"

DDLSIM_REGISTER(ddlsim::models::Compressor, "lwtopk", "layer-wise top-k threshold estimation (seed 002): k values + int32 indices; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::SparseCompressor>(ddlsim::models::read_sparse_params(params, 0.01));
                })
