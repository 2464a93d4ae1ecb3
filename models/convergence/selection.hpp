// ddlsim: which entries a sparsifier sends, on the co-simulated gradients (compression.hpp says
// which compressor uses which; each rule as its authors' code has it).
#pragma once

#include "models/convergence/classifier.hpp"
#include "models/convergence/random.hpp"

#include <vector>

namespace ddlsim::models::convergence {

/// The k of largest |x| in [lo, hi) (ties: the lower index), exactly.
std::vector<Eigen::Index> top(const Vector& x, Eigen::Index lo, Eigen::Index hi, Eigen::Index k);
/// Seed 002's k for its own sparsifiers: max(1, int(n cr)).
Eigen::Index floor_count(Eigen::Index n, double ratio);
/// Seed 002's MSTopKCompression.msampling_compress on x[lo, lo + n).
std::vector<Eigen::Index> mstopk_select(const Vector& x, Eigen::Index lo, Eigen::Index n, double ratio, Rng& rng);
/// Deep Gradient Compression's _sparsify on x[lo, lo + n).
std::vector<Eigen::Index> dgc_select(const Vector& x, Eigen::Index lo, Eigen::Index n, double ratio, Rng& rng);

}  // namespace ddlsim::models::convergence
