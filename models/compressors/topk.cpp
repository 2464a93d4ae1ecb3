// topk: exact top-k sparsification (Aji & Heafield, "Sparse communication for
// distributed gradient descent", EMNLP 2017; seed 002): the k = ceil(ratio n) elements of
// largest |g| as fp32 values with int32 indices (8k bytes), the rest kept as error
// feedback. Per-worker index sets cannot be summed in transit: gathered (all-gather or
// parameter server), then decoded and summed. Selection costs O(n log k) (cost table).
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class TopK final : public Compressor {
 public:
  explicit TopK(SparseParams p) : p_(p) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override { return sparse_encoding(dense_bytes, p_.ratio); }
  [[nodiscard]] bool error_feedback() const override { return p_.error_feedback; }
  [[nodiscard]] double state_buffers() const override { return p_.error_feedback ? 1.0 : 0.0; }
  [[nodiscard]] std::string index_encoding() const override { return "int32 index + fp32 value per kept element"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"ratio", p_.ratio}, {"error_feedback", p_.error_feedback}};
  }

 private:
  SparseParams p_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "topk", "exact top-k (Aji 2017): k = ratio n values + int32 indices, error feedback; gathered",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::TopK>(ddlsim::models::read_sparse_params(params, 0.01));
                })
