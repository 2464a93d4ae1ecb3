// ddlsim: the Compressor interface -- what a compressed gradient bucket puts on the wire.
//
// Seed 002 (Tyagi & Swany, IEEE BigData 2023): compression pays only when
// t_sync(c) + t_comp-decomp(c) < t_sync, and which collective is optimal depends on
// how the compressed gradients can be aggregated:
//   SUM     dense-summable: every worker's encoding has the same layout, so they add
//           up in transit -> any all-reduce (fp16, bf16, PowerSGD's P and Q, random-k
//           with a shared seed);
//   GATHER  per-worker encodings (own indices, own scales) that cannot be summed in
//           transit -> all-gather of every worker's encoding, or a push to parameter
//           servers, then decode and sum (top-k, DGC, threshold, LWTop-k, MSTop-k,
//           QSGD, TernGrad, 1-bit SGD);
//   ARTOPK  AR-Topk: one worker's top-k indices are broadcast, then the k values at
//           those indices are all-reduced (the artopk collectives).
// encode() gives, for a bucket of dense fp32 gradient bytes, the bytes one worker
// sends, their layout and the elements kept; the encode/decode compute times come
// from a cost table (models/compression_cost.hpp, by the compressor's name).
#pragma once

#include "models/registry.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddlsim::models {

enum class Aggregation { SUM, GATHER, ARTOPK };
std::string to_string(Aggregation a);

/// A bucket as it goes on the wire.
struct Encoding {
  double wire_bytes = 0;      // what one worker sends for the bucket (values, indices, scales)
  double value_bytes = 0;     // of which values
  double index_bytes = 0;     // of which indices (0 without)
  double kept_elements = 0;   // elements that carry a value (sparsifiers: k; others: n)
  Aggregation aggregation = Aggregation::SUM;
};

/// Bytes per dense gradient element: the profiles' gradients are fp32.
inline constexpr double DENSE_ELEMENT_BYTES = 4.0;

class Compressor {
 public:
  virtual ~Compressor() = default;
  /// The encoding of a bucket of `dense_bytes` bytes of fp32 gradients.
  [[nodiscard]] virtual Encoding encode(double dense_bytes) const = 0;
  /// How the encoded buckets combine (the same at every size: every encoding of one compressor
  /// has the same Encoding::aggregation), asked wherever a layer needs the kind without a bucket.
  [[nodiscard]] Aggregation aggregation() const { return encode(1e6).aggregation; }
  /// True if the compressor keeps an error-feedback residual (dense, one per bucket:
  /// memory = the gradient bytes; DGC's momentum correction keeps a second one).
  [[nodiscard]] virtual bool error_feedback() const { return false; }
  /// Extra dense-sized buffers kept per worker, in units of the gradient bytes.
  [[nodiscard]] virtual double state_buffers() const { return error_feedback() ? 1.0 : 0.0; }
  /// How the index set is encoded on the wire, one line (for the summary and docs).
  [[nodiscard]] virtual std::string index_encoding() const { return "none (dense)"; }
  /// The dependent collective calls a bucket's `wire_bytes` (encode(...).wire_bytes) goes out in, in
  /// order: each call needs the previous one's result (PowerSGD: P, then Q computed from the reduced
  /// P). One call by default.
  [[nodiscard]] virtual std::vector<double> rounds(double wire_bytes) const { return {wire_bytes}; }
  /// True if a bucket goes out in more than one dependent call (rounds; the same at every size).
  [[nodiscard]] bool in_rounds() const { return rounds(encode(1e6).wire_bytes).size() > 1; }
  /// The compressor's settings with defaults filled in (summary.json).
  [[nodiscard]] virtual nlohmann::json settings() const { return nlohmann::json::object(); }
};

/// The elements a sparsifier keeps of `n`: ceil(ratio * n) (a product that is a whole number in
/// decimal is not rounded up by its binary error), at least 1 of a non-empty tensor.
double kept_of(double n, double ratio);

/// A sparsifier's params: "ratio" (kept fraction, (0, 1], default `default_ratio`) and
/// "error_feedback" (keep the dropped remainder and add it to the next gradient, default true).
struct SparseParams {
  double ratio = 0.01;
  bool error_feedback = true;
};
SparseParams read_sparse_params(ObjectReader& params, double default_ratio);

/// Values and int32 indices of k kept elements: 4k + 4k bytes, aggregated by gathering.
Encoding sparse_encoding(double dense_bytes, double ratio);

/// A 16-bit float cast (fp16, bf16): 2 bytes per element, the same layout on every worker,
/// summable by any all-reduce.
class TwoByteFloat final : public Compressor {
 public:
  [[nodiscard]] Encoding encode(double dense_bytes) const override {
    const double n = dense_bytes / DENSE_ELEMENT_BYTES;
    return Encoding{2 * n, 2 * n, 0, n, Aggregation::SUM};
  }
};

/// A sparsifier that sends its k kept elements as fp32 values with int32 indices (topk, dgc,
/// lwtopk, mstopk differ in how they find them: in their encode cost, not on the wire).
class SparseCompressor final : public Compressor {
 public:
  /// `buffers`: dense state buffers kept with error feedback (DGC: momentum and residual, 2).
  explicit SparseCompressor(SparseParams p, double buffers = 1.0) : p_(p), buffers_(buffers) {}
  [[nodiscard]] Encoding encode(double dense_bytes) const override { return sparse_encoding(dense_bytes, p_.ratio); }
  [[nodiscard]] bool error_feedback() const override { return p_.error_feedback; }
  [[nodiscard]] double state_buffers() const override { return p_.error_feedback ? buffers_ : 0.0; }
  [[nodiscard]] std::string index_encoding() const override { return "int32 index + fp32 value per kept element"; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"ratio", p_.ratio}, {"error_feedback", p_.error_feedback}};
  }

 private:
  SparseParams p_;
  double buffers_;
};

using CompressorRegistry = Registry<Compressor>;

}  // namespace ddlsim::models
