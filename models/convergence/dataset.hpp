// ddlsim: the real datasets the co-simulation trains on (training.convergence, docs/convergence.md).
//
//   * fashion_mnist: Zalando's Fashion-MNIST (Xiao, Rasul & Vollgraf 2017), 60,000 training and
//     10,000 test images of 28 x 28 grey pixels in 10 classes, from Debian's dataset-fashion-mnist
//     (/usr/share/datasets/fashion-mnist, the IDX files gzipped). Pixels scaled to [0, 1].
//   * digits: the UCI optical digits as scikit-learn ships them (Debian's python3-sklearn,
//     sklearn/datasets/data/digits.csv.gz): 1,797 images of 8 x 8 pixels (0..16) in 10 classes, no
//     split of its own: a fixed permutation (seed 0) puts the first 80 % in training, the rest in
//     test. Pixels scaled to [0, 1].
//
// Both are read with zlib. `train_limit` / `test_limit` > 0 keep only the first samples of each
// split (in file order): smaller runs, the same data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::models::convergence {

struct Dataset {
  std::string name;
  std::string source;  // the files read
  int features = 0;
  int classes = 0;
  std::vector<float> train_x, test_x;  // row-major: sample i's features at [i * features, (i + 1) * features)
  std::vector<std::uint8_t> train_y, test_y;
  [[nodiscard]] std::size_t train_size() const { return train_y.size(); }
  [[nodiscard]] std::size_t test_size() const { return test_y.size(); }
};

/// "fashion_mnist, digits"
[[nodiscard]] const char* dataset_names();
/// Loads a named dataset. Throws std::invalid_argument for an unknown name and std::runtime_error
/// naming the file and the Debian package when a file is missing or malformed.
[[nodiscard]] Dataset load_dataset(const std::string& name, std::size_t train_limit = 0, std::size_t test_limit = 0);

/// Where the named dataset is read from (its first file), for messages.
[[nodiscard]] std::string dataset_location(const std::string& name);

}  // namespace ddlsim::models::convergence
