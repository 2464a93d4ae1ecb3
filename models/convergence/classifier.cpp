// ddlsim: softmax regression and a one-hidden-layer MLP (see classifier.hpp).
#include "models/convergence/classifier.hpp"

#include "models/convergence/random.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ddlsim::models::convergence {
namespace {

using ConstMap = Eigen::Map<const Matrix>;
using Map = Eigen::Map<Matrix>;

/// Row-wise log-sum-exp of `z`, stable.
Eigen::VectorXd log_sum_exp(const Matrix& z) {
  const Eigen::VectorXd top = z.rowwise().maxCoeff();
  return top.array() + (z.colwise() - top).array().exp().rowwise().sum().log();
}

}  // namespace

Classifier::Classifier(int features, int classes, int hidden)
    : d_(features), c_(classes), h_(hidden),
      size_(hidden > 0 ? std::int64_t{hidden} * (features + 1) + std::int64_t{classes} * (hidden + 1)
                       : std::int64_t{classes} * (features + 1)) {}

std::string Classifier::describe() const {
  return h_ > 0 ? fmt::format("mlp {}-{}-{} ({} parameters)", d_, h_, c_, size_)
                : fmt::format("softmax {}-{} ({} parameters)", d_, c_, size_);
}

Vector Classifier::initial(std::uint64_t seed) const {
  Vector theta = Vector::Zero(size_);
  if (h_ == 0) return theta;
  Rng rng(seed ^ 0x636f6e7665726765ULL);  // "converge": apart from the shards' streams
  const double s1 = std::sqrt(2.0 / d_), s2 = std::sqrt(2.0 / (h_ + c_));
  const std::int64_t w1 = std::int64_t{h_} * d_, w2_at = w1 + h_, w2 = std::int64_t{c_} * h_;
  for (std::int64_t i = 0; i < w1; ++i) theta[i] = s1 * rng.normal();
  for (std::int64_t i = 0; i < w2; ++i) theta[w2_at + i] = s2 * rng.normal();
  return theta;
}

std::vector<Classifier::Tensor> Classifier::tensors() const {
  if (h_ == 0) return {{"weight", 0, Eigen::Index{c_} * d_}, {"bias", Eigen::Index{c_} * d_, c_}};
  const Eigen::Index w1 = Eigen::Index{h_} * d_, at2 = w1 + h_;
  return {{"hidden.weight", 0, w1}, {"hidden.bias", w1, h_}, {"out.weight", at2, Eigen::Index{c_} * h_},
          {"out.bias", at2 + Eigen::Index{c_} * h_, c_}};
}

Matrix Classifier::logits(const Vector& theta, const Matrix& x, Matrix* hidden) const {
  if (h_ == 0) {
    const ConstMap w(theta.data(), c_, d_);
    const Eigen::Map<const Eigen::RowVectorXd> b(theta.data() + std::int64_t{c_} * d_, c_);
    return (x * w.transpose()).rowwise() + b;
  }
  const ConstMap w1(theta.data(), h_, d_);
  const Eigen::Map<const Eigen::RowVectorXd> b1(theta.data() + std::int64_t{h_} * d_, h_);
  const double* rest = theta.data() + std::int64_t{h_} * (d_ + 1);
  const ConstMap w2(rest, c_, h_);
  const Eigen::Map<const Eigen::RowVectorXd> b2(rest + std::int64_t{c_} * h_, c_);
  Matrix a = ((x * w1.transpose()).rowwise() + b1).cwiseMax(0.0);
  Matrix z = (a * w2.transpose()).rowwise() + b2;
  if (hidden != nullptr) *hidden = std::move(a);
  return z;
}

double Classifier::accumulate(const Vector& theta, const Matrix& x, const std::uint8_t* y, Vector& grad) const {
  Matrix hidden;
  Matrix g = logits(theta, x, h_ > 0 ? &hidden : nullptr);
  const Eigen::VectorXd lse = log_sum_exp(g);
  double loss = 0;
  for (Eigen::Index i = 0; i < g.rows(); ++i) {
    loss += lse[i] - g(i, y[i]);
    g.row(i) = (g.row(i).array() - lse[i]).exp();  // softmax
    g(i, y[i]) -= 1.0;                             // minus the one-hot label
  }
  if (h_ == 0) {
    Map dw(grad.data(), c_, d_);
    dw.noalias() += g.transpose() * x;
    grad.segment(std::int64_t{c_} * d_, c_) += g.colwise().sum().transpose();
    return loss;
  }
  const std::int64_t at2 = std::int64_t{h_} * (d_ + 1);
  const ConstMap w2(theta.data() + at2, c_, h_);
  Map dw2(grad.data() + at2, c_, h_);
  dw2.noalias() += g.transpose() * hidden;
  grad.segment(at2 + std::int64_t{c_} * h_, c_) += g.colwise().sum().transpose();
  Matrix dh = (g * w2).cwiseProduct((hidden.array() > 0.0).cast<double>().matrix());
  Map dw1(grad.data(), h_, d_);
  dw1.noalias() += dh.transpose() * x;
  grad.segment(std::int64_t{h_} * d_, h_) += dh.colwise().sum().transpose();
  return loss;
}

Classifier::Score Classifier::evaluate(const Vector& theta, const Matrix& x, const std::uint8_t* y) const {
  const Matrix z = logits(theta, x, nullptr);
  const Eigen::VectorXd lse = log_sum_exp(z);
  Score s;
  std::int64_t right = 0;
  for (Eigen::Index i = 0; i < z.rows(); ++i) {
    s.loss += lse[i] - z(i, y[i]);
    Eigen::Index best = 0;
    z.row(i).maxCoeff(&best);
    right += best == y[i] ? 1 : 0;
  }
  if (z.rows() > 0) {
    s.loss /= static_cast<double>(z.rows());
    s.accuracy = static_cast<double>(right) / static_cast<double>(z.rows());
  }
  return s;
}

}  // namespace ddlsim::models::convergence
