// randomk: random-k sparsification with a shared seed (Stich et al., "Sparsified SGD
// with memory", NeurIPS 2018). Every worker draws the same k = ceil(ratio n) indices from
// a seed shared per iteration, so only the fp32 values travel (4k bytes) and they are
// summed in transit by any all-reduce; the rest is kept as error feedback.
#include "models/compressor.hpp"

namespace ddlsim::models {
namespace {

class RandomK final : public Compressor {
 public:
  explicit RandomK(SparseParams p) : p_(p) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double k = kept_of(dense_bytes / DENSE_ELEMENT_BYTES, p_.ratio);
    return Encoding{4 * k, 4 * k, 0, k, Aggregation::SUM};
  }
  [[nodiscard]] bool error_feedback() const override { return p_.error_feedback; }
  [[nodiscard]] std::string index_encoding() const override { return "none on the wire (indices from a shared seed)"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"ratio", p_.ratio}, {"error_feedback", p_.error_feedback}};
  }

 private:
  SparseParams p_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "randomk",
                "random-k with a shared seed (Stich 2018): k fp32 values, no indices, error feedback; summable",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::RandomK>(ddlsim::models::read_sparse_params(params, 0.01));
                })
