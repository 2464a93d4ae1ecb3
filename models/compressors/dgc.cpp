// dgc: Deep Gradient Compression (Lin et al., "Deep gradient compression: reducing
// the communication bandwidth for distributed training", ICLR 2018). The top-k
// threshold is estimated on a random sample of the gradient (0.1-1 %) and the elements
// above it are sent as fp32 values with int32 indices (8k bytes, default ratio 0.001,
// the paper's 99.9 % sparsity); momentum correction and local gradient accumulation keep
// two dense buffers per worker (momentum and residual). Gathered.
#include "models/compressor.hpp"

DDLSIM_REGISTER(ddlsim::models::Compressor, "dgc", "Deep Gradient Compression (Lin 2018): sampled threshold, k values + int32 indices, momentum correction; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::SparseCompressor>(ddlsim::models::read_sparse_params(params, 0.001), 2.0);
                })
