// ddlsim: gradient compressors applied to the co-simulated training's real gradients (bsp only;
// docs/convergence.md, "Compressors").
//
// Each iteration every worker's gradient g_w (plus its error-feedback residual e_w where the
// compressor keeps one) is compressed per bucket as the compressor's wire format says
// (docs/compression.md), the aggregation combines what the workers sent, and the step uses the mean:
//   topk     the k = ceil(ratio n) entries of largest |x| (ties: the lower index) (Aji & Heafield 2017)
//   randomk  k entries from a seed shared by every worker per iteration and bucket (Stich et al. 2018)
//   artopk   the k entries of largest |x| on the iteration's root worker (the run plan's, as the
//            timing side rotates it), every worker's values at those indices (seed 002)
//   fp16     each element rounded to IEEE half, bf16 to bfloat16 (round to nearest even); the sum
//            is then exact (the library's half-precision summation rounding is not modelled)
//   onebit   each element's sign; decoded as the mean of the bucket's non-negative entries or of
//            its negative ones (Seide et al. 2014; the wire's 2 fp32 scales per bucket)
//   qsgd     x_i = ||x||_2 sign(x_i) xi_i / s, xi_i the stochastic rounding of s |x_i| / ||x||_2 to
//            an integer (Alistarh et al. 2017; s = levels), unbiased
//   terngrad x_i = max|x| sign(x_i) b_i, b_i ~ Bernoulli(|x_i| / max|x|) (Wen et al. 2017), unbiased
//   lwtopk   top-k per layer (each parameter tensor, not the bucket), k = max(1, floor(ratio n)) as
//            seed 002's LWTopKCompression (github.com/sahiltyagi4/ARTopk, miscellaneous/compression.py)
//   mstopk   seed 002's MSTopKCompression.msampling_compress per bucket, k = max(1, floor(ratio n)):
//            25 rounds of bisection for a threshold between mean|x| and max|x|; the elements at or
//            above the best threshold that keeps <= k (k1 of them), then k - k1 drawn as a
//            contiguous run (start uniform in 0 .. |l2| - (k - k1) + 1, the seed's randint bounds)
//            from those between it and the best threshold that keeps > k (l2)
//   dgc      per layer, Lin et al. (ICLR 2018) as their code (github.com/synxlin/deep-gradient-
//            compression, dgc/compression.py _sparsify): |x| sampled at a stride (sample ratio 1 %,
//            at least 2 / ratio samples, random start), the threshold the k_s-th largest sample,
//            then adapted (more than 1.3 k selected: exact top-k among them; fewer than 0.8 k: the
//            threshold times 0.8, at most 10 times); the first k = ceil(ratio n) indices sent
//            (ratio 1: the tensor as it is, as compress() does).
//            Momentum correction with the trainer's momentum (plain SGD here: 0), so the velocity
//            is the gradient plus what was not sent (local gradient accumulation)
//   threshold Strom (2015): elements with |x| >= tau sent as sign(x) tau, the rest kept as error;
//            tau per bucket and iteration the k-th largest |x|, k = the density's count (the
//            timing side sends that count: a fixed tau would send a count only the gradients know)
//   powersgd the bucket as the most square matrix M (rows = ceil(sqrt n), cols = ceil(n / rows),
//            zero-padded), rank r: P = mean_w M_w Q, P orthogonalised (Gram-Schmidt),
//            Q = mean_w M_w^T P, the step's gradient P Q^T; Q kept for the next iteration (warm
//            start, first drawn N(0, 1) from the seed) (Vogels et al., NeurIPS 2019)
// Error feedback (topk, randomk, artopk, lwtopk, mstopk, dgc with error_feedback; onebit, threshold and
// powersgd always):
// e_w <- x_w - what w's gradient contributed (for powersgd: x_w - P Q^T, as PyTorch's hook).
// Random draws are seeded per (iteration, worker, bucket): the same scenario and seed give the
// same numerics.
#pragma once

#include "models/convergence/classifier.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace ddlsim::models::convergence {

struct Compression {
  enum class Kind { NONE, TOPK, RANDOMK, ARTOPK, LWTOPK, MSTOPK, DGC, THRESHOLD, FP16, BF16, ONEBIT, QSGD, TERNGRAD, POWERSGD };
  Kind kind = Kind::NONE;
  double ratio = 1;            // the sparsifiers' kept fraction (threshold: its density)
  bool error_feedback = true;  // topk, randomk, artopk, lwtopk, mstopk, dgc (onebit, threshold and powersgd always keep one)
  int levels = 127;            // qsgd
  int rank = 4;                // powersgd
  std::vector<double> bucket_bytes;  // the plan's buckets: bucket b holds its share of the parameters, in order
  std::vector<int> roots;            // artopk: the selecting worker per iteration (the run plan's)
  /// lwtopk, dgc: the model's parameter tensors (offset, size) in the flat vector; empty: one.
  std::vector<std::pair<Eigen::Index, Eigen::Index>> layers;
};

/// The names co-simulated, in the order refusals list them.
const char* co_simulated_compressors();

class GradientCompression {
 public:
  GradientCompression(Compression c, Eigen::Index parameters, int workers, std::uint64_t seed);

  /// Iteration k: the workers' gradients in; the gradient the step applies (the mean of what the
  /// aggregation delivered) out. Keeps the residuals and PowerSGD's Q.
  Vector aggregate(int k, const std::vector<Vector>& gradients);

  [[nodiscard]] const Compression& settings() const { return c_; }
  /// The kept fraction from the next aggregate() on (adaptive compression's choice per iteration).
  void set_ratio(double ratio) { c_.ratio = ratio; }
  /// The last aggregate()'s compression gain, sum_w ||sent_w||^2 / sum_w ||x_w||^2 with x_w the
  /// gradient plus its residual (seed 002's gain, as tools/measure_gain.py squares it); 1 when
  /// every x_w was zero.
  [[nodiscard]] double last_gain() const { return gain_; }
  /// Residuals back to zero (a new compressor's memory).
  void clear_residuals() {
    for (auto& r : residuals_) r.setZero();
  }
  [[nodiscard]] bool keeps_residuals() const;

 private:
  [[nodiscard]] Eigen::Index kept(std::size_t b) const;
  void sparse(int k, std::vector<Vector>& x, std::vector<Vector>& sent) const;
  void selected(int k, std::vector<Vector>& x, std::vector<Vector>& sent) const;  // lwtopk, mstopk, dgc, threshold
  void powersgd(std::vector<Vector>& x, std::vector<Vector>& sent, Vector& mean);

  Compression c_;
  int n_;
  std::uint64_t seed_;
  std::vector<Eigen::Index> cut_;  // bucket b: parameters [cut_[b], cut_[b + 1])
  std::vector<Vector> residuals_;  // per worker
  std::vector<Matrix> q_;          // powersgd, per bucket
  double gain_ = 1;
};

}  // namespace ddlsim::models::convergence
