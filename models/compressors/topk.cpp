// topk: exact top-k sparsification (Aji & Heafield, "Sparse communication for
// distributed gradient descent", EMNLP 2017; seed 002): the k = ceil(ratio n) elements of
// largest |g| as fp32 values with int32 indices (8k bytes), the rest kept as error
// feedback. Per-worker index sets cannot be summed in transit: gathered (all-gather or
// parameter server), then decoded and summed. Selection costs O(n log k) (cost table).
#include "models/compressor.hpp"

DDLSIM_REGISTER(ddlsim::models::Compressor, "topk", "exact top-k (Aji 2017): k = ratio n values + int32 indices, error feedback; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::SparseCompressor>(ddlsim::models::read_sparse_params(params, 0.01));
                })
