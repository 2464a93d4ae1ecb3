// ddlsim: compressors on the co-simulated gradients (see compression.hpp).
#include "models/convergence/compression.hpp"

#include "models/compressor.hpp"
#include "models/convergence/random.hpp"
#include "models/convergence/selection.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace ddlsim::models::convergence {
namespace {

using Kind = Compression::Kind;

}  // namespace

const char* co_simulated_compressors() {
  return "none, topk, randomk, artopk, lwtopk, mstopk, dgc, threshold, fp16, bf16, onebit, qsgd, terngrad, powersgd";
}

GradientCompression::GradientCompression(Compression c, Eigen::Index parameters, int workers, std::uint64_t seed)
    : c_(std::move(c)), n_(workers), seed_(seed) {
  // Bucket b's parameters: its share of the bytes, in order (as the parameter servers' shards).
  cut_.push_back(0);
  double total = 0, offset = 0;
  for (double b : c_.bucket_bytes) total += b;
  for (double b : c_.bucket_bytes) {
    offset += b;
    cut_.push_back(total > 0 ? static_cast<Eigen::Index>(std::llround(static_cast<double>(parameters) * offset / total))
                             : parameters);
  }
  if (cut_.size() < 2) cut_.push_back(parameters);
  cut_.back() = parameters;
  if (keeps_residuals()) residuals_.assign(static_cast<std::size_t>(workers), Vector::Zero(parameters));
  if (c_.kind == Kind::POWERSGD)
    for (std::size_t b = 0; b + 1 < cut_.size(); ++b) {
      const Eigen::Index n = cut_[b + 1] - cut_[b];
      const auto rows = static_cast<Eigen::Index>(std::ceil(std::sqrt(static_cast<double>(n))));
      const Eigen::Index cols = rows > 0 ? (n + rows - 1) / rows : 0;
      const Eigen::Index r = std::min<Eigen::Index>(c_.rank, std::min(rows, cols));
      Matrix q(cols, r);
      Rng rng(stream(seed_, 5, b));
      for (Eigen::Index i = 0; i < cols; ++i)
        for (Eigen::Index j = 0; j < r; ++j) q(i, j) = rng.normal();
      q_.push_back(std::move(q));
    }
}

bool GradientCompression::keeps_residuals() const {
  switch (c_.kind) {
    case Kind::TOPK:
    case Kind::RANDOMK:
    case Kind::ARTOPK:
    case Kind::LWTOPK:
    case Kind::MSTOPK:
    case Kind::DGC: return c_.error_feedback;
    case Kind::THRESHOLD:
    case Kind::ONEBIT:
    case Kind::POWERSGD: return true;
    default: return false;
  }
}

Eigen::Index GradientCompression::kept(std::size_t b) const {
  const Eigen::Index n = cut_[b + 1] - cut_[b];
  return std::min<Eigen::Index>(n, static_cast<Eigen::Index>(std::ceil(c_.ratio * static_cast<double>(n))));
}

void GradientCompression::sparse(int k, std::vector<Vector>& x, std::vector<Vector>& sent) const {
  for (std::size_t b = 0; b + 1 < cut_.size(); ++b) {
    const Eigen::Index lo = cut_[b], hi = cut_[b + 1];
    std::vector<Eigen::Index> shared;  // randomk, artopk: the same indices on every worker
    if (c_.kind == Kind::RANDOMK) {
      shared.resize(static_cast<std::size_t>(hi - lo));
      std::iota(shared.begin(), shared.end(), lo);
      Rng rng(stream(seed_, 3, static_cast<std::uint64_t>(k) << 16 ^ b));
      shuffle(shared, rng);
      shared.resize(static_cast<std::size_t>(kept(b)));
    } else if (c_.kind == Kind::ARTOPK) {
      const int root = c_.roots.empty() ? 0 : c_.roots.at(static_cast<std::size_t>(k));
      shared = top(x[static_cast<std::size_t>(root)], lo, hi, kept(b));
    }
    for (int w = 0; w < n_; ++w) {
      const auto& xw = x[static_cast<std::size_t>(w)];
      auto& sw = sent[static_cast<std::size_t>(w)];
      for (const auto i : c_.kind == Kind::TOPK ? top(xw, lo, hi, kept(b)) : shared) sw[i] = xw[i];
    }
  }
}

void GradientCompression::selected(int k, std::vector<Vector>& x, std::vector<Vector>& sent) const {
  // lwtopk and dgc select per layer, mstopk and threshold per bucket.
  std::vector<std::pair<Eigen::Index, Eigen::Index>> parts;
  if (c_.kind == Kind::LWTOPK || c_.kind == Kind::DGC) {
    parts = c_.layers;
    if (parts.empty()) parts.emplace_back(0, cut_.back());
  } else {
    for (std::size_t b = 0; b + 1 < cut_.size(); ++b) parts.emplace_back(cut_[b], cut_[b + 1] - cut_[b]);
  }
  for (int w = 0; w < n_; ++w) {
    const auto& xw = x[static_cast<std::size_t>(w)];
    auto& sw = sent[static_cast<std::size_t>(w)];
    for (std::size_t part = 0; part < parts.size(); ++part) {
      const auto [lo, n] = parts[part];
      if (n == 0) continue;
      Rng rng(stream(seed_, 6, (static_cast<std::uint64_t>(k) << 32) ^ (static_cast<std::uint64_t>(w) << 16) ^ part));
      switch (c_.kind) {
        case Kind::LWTOPK:
          for (const auto i : top(xw, lo, lo + n, std::min(n, floor_count(n, c_.ratio)))) sw[i] = xw[i];
          break;
        case Kind::MSTOPK:
          for (const auto i : mstopk_select(xw, lo, n, c_.ratio, rng)) sw[i] = xw[i];
          break;
        case Kind::DGC:
          for (const auto i : dgc_select(xw, lo, n, c_.ratio, rng)) sw[i] = xw[i];
          break;
        default: {  // THRESHOLD
          const auto kept = std::min(n, static_cast<Eigen::Index>(kept_of(static_cast<double>(n), c_.ratio)));  // the timing side's count
          const auto idx = top(xw, lo, lo + n, kept);
          double tau = std::numeric_limits<double>::infinity();
          for (const auto i : idx) tau = std::min(tau, std::abs(xw[i]));
          for (const auto i : idx) sw[i] = xw[i] > 0 ? tau : xw[i] < 0 ? -tau : 0.0;
        }
      }
    }
  }
}

void GradientCompression::powersgd(std::vector<Vector>& x, std::vector<Vector>& sent, Vector& mean) {
  for (std::size_t b = 0; b + 1 < cut_.size(); ++b) {
    const Eigen::Index lo = cut_[b], n = cut_[b + 1] - lo;
    Matrix& q = q_[b];
    const Eigen::Index cols = q.rows(), r = q.cols();
    if (r == 0) continue;
    const auto padded_rows = static_cast<Eigen::Index>(std::ceil(std::sqrt(static_cast<double>(n))));
    std::vector<Matrix> m(static_cast<std::size_t>(n_), Matrix::Zero(padded_rows, cols));
    for (int w = 0; w < n_; ++w)
      for (Eigen::Index i = 0; i < n; ++i) m[static_cast<std::size_t>(w)](i / cols, i % cols) = x[static_cast<std::size_t>(w)][lo + i];
    Matrix p = Matrix::Zero(padded_rows, r);
    for (const auto& mw : m) p += mw * q;
    p /= static_cast<double>(n_);
    for (Eigen::Index j = 0; j < r; ++j) {  // Gram-Schmidt on P's columns
      for (Eigen::Index i = 0; i < j; ++i) p.col(j) -= p.col(i).dot(p.col(j)) * p.col(i);
      const double norm = p.col(j).norm();
      if (norm > 0) p.col(j) /= norm;
    }
    q.setZero();
    for (const auto& mw : m) q += mw.transpose() * p;
    q /= static_cast<double>(n_);
    const Matrix approx = p * q.transpose();
    for (Eigen::Index i = 0; i < n; ++i) {
      const double v = approx(i / cols, i % cols);
      mean[lo + i] = v;
      for (int w = 0; w < n_; ++w) sent[static_cast<std::size_t>(w)][lo + i] = v;  // each worker's error: x - P Q^T
    }
  }
}

Vector GradientCompression::aggregate(int k, const std::vector<Vector>& gradients) {
  const Eigen::Index p = gradients.front().size();
  std::vector<Vector> x = gradients;
  if (!residuals_.empty())
    for (int w = 0; w < n_; ++w) x[static_cast<std::size_t>(w)] += residuals_[static_cast<std::size_t>(w)];
  std::vector<Vector> sent(static_cast<std::size_t>(n_), Vector::Zero(p));
  Vector mean = Vector::Zero(p);
  switch (c_.kind) {
    case Kind::NONE: sent = x; break;
    case Kind::TOPK:
    case Kind::RANDOMK:
    case Kind::ARTOPK: sparse(k, x, sent); break;
    case Kind::LWTOPK:
    case Kind::MSTOPK:
    case Kind::DGC:
    case Kind::THRESHOLD: selected(k, x, sent); break;
    case Kind::FP16:
      for (int w = 0; w < n_; ++w)
        sent[static_cast<std::size_t>(w)] = x[static_cast<std::size_t>(w)].unaryExpr(
            [](double v) { return static_cast<double>(static_cast<float>(Eigen::half(static_cast<float>(v)))); });
      break;
    case Kind::BF16:
      for (int w = 0; w < n_; ++w)
        sent[static_cast<std::size_t>(w)] = x[static_cast<std::size_t>(w)].unaryExpr(
            [](double v) { return static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(v)))); });
      break;
    case Kind::ONEBIT:
      for (int w = 0; w < n_; ++w)
        for (std::size_t b = 0; b + 1 < cut_.size(); ++b) {
          const auto seg = x[static_cast<std::size_t>(w)].segment(cut_[b], cut_[b + 1] - cut_[b]);
          double pos = 0, neg = 0;
          Eigen::Index np = 0;
          for (Eigen::Index i = 0; i < seg.size(); ++i) {
            if (seg[i] >= 0) { pos += seg[i]; ++np; } else { neg += seg[i]; }
          }
          const double up = np > 0 ? pos / static_cast<double>(np) : 0;
          const double down = seg.size() > np ? neg / static_cast<double>(seg.size() - np) : 0;
          for (Eigen::Index i = 0; i < seg.size(); ++i) sent[static_cast<std::size_t>(w)][cut_[b] + i] = seg[i] >= 0 ? up : down;
        }
      break;
    case Kind::QSGD:
    case Kind::TERNGRAD:
      for (int w = 0; w < n_; ++w)
        for (std::size_t b = 0; b + 1 < cut_.size(); ++b) {
          const Eigen::Index lo = cut_[b], n = cut_[b + 1] - lo;
          const auto seg = x[static_cast<std::size_t>(w)].segment(lo, n);
          const double scale = c_.kind == Kind::QSGD ? seg.norm() : seg.cwiseAbs().maxCoeff();
          if (!(scale > 0)) continue;
          const double s = c_.kind == Kind::QSGD ? c_.levels : 1;
          Rng rng(stream(seed_, 4, (static_cast<std::uint64_t>(k) << 32) ^ (static_cast<std::uint64_t>(w) << 16) ^ b));
          for (Eigen::Index i = 0; i < n; ++i) {
            const double level = s * std::abs(seg[i]) / scale, low = std::floor(level);
            const double xi = low + (rng.uniform() < level - low ? 1.0 : 0.0);
            sent[static_cast<std::size_t>(w)][lo + i] = (seg[i] < 0 ? -1.0 : 1.0) * scale * xi / s;
          }
        }
      break;
    case Kind::POWERSGD: powersgd(x, sent, mean); break;
  }
  if (c_.kind != Kind::POWERSGD) {
    for (const auto& s : sent) mean += s;
    mean /= static_cast<double>(n_);
  }
  double kept = 0, offered = 0;
  for (int w = 0; w < n_; ++w) {
    kept += sent[static_cast<std::size_t>(w)].squaredNorm();
    offered += x[static_cast<std::size_t>(w)].squaredNorm();
  }
  gain_ = offered > 0 ? kept / offered : 1.0;
  if (!residuals_.empty())
    for (int w = 0; w < n_; ++w) residuals_[static_cast<std::size_t>(w)] = x[static_cast<std::size_t>(w)] - sent[static_cast<std::size_t>(w)];
  return mean;
}

}  // namespace ddlsim::models::convergence
