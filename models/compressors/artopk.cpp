// artopk: AR-Topk (seed 002: Tyagi & Swany, IEEE BigData 2023). Each iteration one
// worker (round-robin "star", or the one with the most volatile gradients, "var")
// selects the top-k indices of its gradient, k = ceil(ratio n); they are broadcast
// (4k bytes of int32 indices from that worker), and every worker then all-reduces its
// own fp32 values at those indices (4k bytes, summable): wire per worker = the values;
// the indices are the broadcast's. Aggregated by the artopk collectives (ring or tree).
// Selection: "star" (STAR-Topk) takes the workers round-robin, iteration mod N, as the
// seed's star_topk.py; "var" (VAR-Topk) takes the worker with the most volatile
// gradients, which a timing model does not have: a seeded uniform draw per iteration
// stands for it (a surrogate, stated in docs/compression.md). The plan asks models/artopk_choice.hpp
// (artopk_root) for each iteration's selecting worker, with this compressor's "selection".
#include "models/compressor.hpp"


namespace ddlsim::models {
namespace {

class ArTopK final : public Compressor {
 public:
  ArTopK(SparseParams p, std::string selection) : p_(p), selection_(std::move(selection)) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double k = kept_of(dense_bytes / DENSE_ELEMENT_BYTES, p_.ratio);
    return Encoding{4 * k, 4 * k, 4 * k, k, Aggregation::ARTOPK};
  }
  [[nodiscard]] bool error_feedback() const override { return p_.error_feedback; }
  [[nodiscard]] std::string index_encoding() const override { return "int32 indices, broadcast once from the selected worker"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"ratio", p_.ratio}, {"error_feedback", p_.error_feedback}, {"selection", selection_}};
  }

 private:
  SparseParams p_;
  std::string selection_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "artopk",
                "AR-Topk (seed 002): one worker's top-k indices broadcast, the k values all-reduced; star or var selection",
                [](ddlsim::ObjectReader& params) {
                  auto sparse = ddlsim::models::read_sparse_params(params, 0.01);
                  auto selection = params.choice("selection", {"star", "var"}, "star");
                  return std::make_unique<ddlsim::models::ArTopK>(sparse, selection);
                })
