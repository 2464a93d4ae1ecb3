// ddlsim: the models the co-simulation trains, in Eigen, in double precision (docs/convergence.md).
//
//   * softmax: multinomial logistic regression, logits = W x + b (W: C x d);
//   * mlp: one hidden layer of h ReLU units, logits = W2 relu(W1 x + b1) + b2.
//
// Loss: the mean cross-entropy of a batch. gradient() returns the exact gradient of that mean (by
// hand: softmax(z) - onehot(y) back through the layers), so the gradient of a union of batches is
// the size-weighted mean of theirs. The parameters are one flat vector (W row-major, then b; for
// mlp W1, b1, W2, b2): what a worker's message carries, and what averaging and mixing act on.
// Initialisation: softmax all zeros; mlp He-normal W1 (std sqrt(2 / d)), Glorot-normal W2
// (std sqrt(2 / (h + C))), zero biases, from the run's seed.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::models::convergence {

using Vector = Eigen::VectorXd;
/// A batch: one sample per row.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class Classifier {
 public:
  /// `hidden` = 0: softmax regression; > 0: an MLP with that many hidden units.
  Classifier(int features, int classes, int hidden);

  [[nodiscard]] std::int64_t parameters() const { return size_; }
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] Vector initial(std::uint64_t seed) const;
  /// The parameter tensors in the flat vector, in order (softmax: W, b; mlp: W1, b1, W2, b2): the
  /// messages of a model that sends tensor by tensor (event_triggered).
  struct Tensor {
    std::string name;
    Eigen::Index offset = 0, size = 0;
  };
  [[nodiscard]] std::vector<Tensor> tensors() const;

  /// The summed cross-entropy of the rows of `x` (labels `y`), and its gradient summed over them
  /// added into `grad` (callers divide by the rows for the mean).
  double accumulate(const Vector& theta, const Matrix& x, const std::uint8_t* y, Vector& grad) const;
  struct Score {
    double loss = 0;      // mean cross-entropy
    double accuracy = 0;  // fraction of argmax(logits) == y (ties: the lowest class)
  };
  [[nodiscard]] Score evaluate(const Vector& theta, const Matrix& x, const std::uint8_t* y) const;

 private:
  [[nodiscard]] Matrix logits(const Vector& theta, const Matrix& x, Matrix* hidden) const;
  int d_, c_, h_;
  std::int64_t size_;
};

}  // namespace ddlsim::models::convergence
