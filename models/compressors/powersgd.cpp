// powersgd: PowerSGD (Vogels et al., "PowerSGD: practical low-rank gradient
// compression for distributed optimization", NeurIPS 2019). A gradient reshaped to a
// matrix of rows x cols is approximated by P Q^T with rank r: one power iteration
// all-reduces P (rows x r) and then Q (cols x r), both summable, with error feedback.
// Profiles carry bytes per layer, not shapes, so a bucket of n elements is taken as the
// most square matrix, rows = ceil(sqrt(n)), cols = ceil(n / rows): wire = 4 r (rows + cols)
// bytes per worker, sent as two dependent all-reduces (the paper's Algorithm 1: P = M Q is
// all-reduced, then Q = M^T P-hat is computed from the reduced, orthogonalised P and all-reduced):
// 4 r rows bytes, then 4 r cols (rounds()), so a bucket pays two latency terms.
#include "models/compressor.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::models {
namespace {

class PowerSgd final : public Compressor {
 public:
  explicit PowerSgd(int rank) : rank_(rank) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double n = std::ceil(dense_bytes / DENSE_ELEMENT_BYTES);
    if (n <= 0) return Encoding{0, 0, 0, 0, Aggregation::SUM};
    const double rows = std::ceil(std::sqrt(n));
    const double cols = std::ceil(n / rows);
    const double r = std::min<double>(rank_, std::min(rows, cols));
    const double bytes = 4 * r * (rows + cols);
    return Encoding{bytes, bytes, 0, r * (rows + cols), Aggregation::SUM};
  }
  /// Inverts encode(): wire = 4 r (rows + cols), cols in {rows - 1, rows}, r = min(rank, cols).
  [[nodiscard]] std::vector<double> rounds(double wire_bytes) const override {
    for (int r = rank_; r >= 1; --r) {
      const double sum = wire_bytes / (4.0 * r);  // rows + cols
      if (sum < 2 || sum != std::floor(sum)) continue;
      const double rows = std::ceil(sum / 2), cols = sum - rows;
      if (std::min<double>(rank_, cols) != r) continue;
      return {4.0 * r * rows, 4.0 * r * cols};
    }
    return {wire_bytes};
  }
  [[nodiscard]] bool error_feedback() const override { return true; }
  [[nodiscard]] std::string index_encoding() const override { return "none (low-rank factors P and Q, fp32)"; }
  [[nodiscard]] nlohmann::json settings() const override { return {{"rank", rank_}}; }

 private:
  int rank_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Compressor, "powersgd",
                "PowerSGD (Vogels 2019): rank-r factors P and Q of the bucket as a square matrix, all-reduced one after the other, error feedback; summable",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::PowerSgd>(static_cast<int>(params.integer("rank", 4, 1, 1024)));
                })
