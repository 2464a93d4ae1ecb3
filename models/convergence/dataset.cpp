// ddlsim: reading Fashion-MNIST and the digits set (see dataset.hpp).
#include "models/convergence/dataset.hpp"

#include "models/convergence/random.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <zlib.h>

namespace ddlsim::models::convergence {
namespace {

constexpr const char* FASHION_DIR = "/usr/share/datasets/fashion-mnist";
constexpr const char* DIGITS_FILE = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

/// The whole decompressed content of a gzip file.
std::string read_gzip(const std::string& file, const char* package) {
  struct Close {
    void operator()(gzFile f) const { gzclose(f); }
  };
  std::unique_ptr<gzFile_s, Close> in(gzopen(file.c_str(), "rb"));
  if (!in)
    throw std::runtime_error(fmt::format("cannot read \"{}\" (install Debian's {}: apt-get install {})", file, package,
                                         package));
  std::string out;
  std::array<char, 1 << 16> buf{};
  while (true) {
    const int n = gzread(in.get(), buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) throw std::runtime_error(fmt::format("\"{}\" is not a readable gzip file", file));
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
    if (out.size() > (std::size_t{1} << 30)) throw std::runtime_error(fmt::format("\"{}\" is larger than 1 GiB", file));
  }
  return out;
}

std::uint32_t big_endian(const std::string& data, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(data[at + i]);
  return v;
}

/// An IDX file (LeCun's MNIST format): magic 0x00000800 | type << 8 | dims, then the dims, big-endian.
struct Idx {
  std::vector<std::uint32_t> dims;
  std::string data;
  std::size_t offset = 0;
};
Idx read_idx(const std::string& file, int expected_dims) {
  Idx idx;
  idx.data = read_gzip(file, "dataset-fashion-mnist");
  const auto bad = [&file] { return std::runtime_error(fmt::format("\"{}\" is not an IDX file of unsigned bytes", file)); };
  if (idx.data.size() < 4 || big_endian(idx.data, 0) != 0x0800U + static_cast<std::uint32_t>(expected_dims)) throw bad();
  std::size_t expected = 1;
  for (int d = 0; d < expected_dims; ++d) {
    const std::size_t at = 4 + 4 * static_cast<std::size_t>(d);
    if (idx.data.size() < at + 4) throw bad();
    idx.dims.push_back(big_endian(idx.data, at));
    expected *= idx.dims.back();
  }
  idx.offset = 4 + 4 * static_cast<std::size_t>(expected_dims);
  if (idx.data.size() != idx.offset + expected) throw bad();
  return idx;
}

void read_fashion_split(const std::string& prefix, std::size_t limit, std::vector<float>& x, std::vector<std::uint8_t>& y,
                        int& features) {
  const Idx images = read_idx(fmt::format("{}/{}-images-idx3-ubyte.gz", FASHION_DIR, prefix), 3);
  const Idx labels = read_idx(fmt::format("{}/{}-labels-idx1-ubyte.gz", FASHION_DIR, prefix), 1);
  if (images.dims[0] != labels.dims[0])
    throw std::runtime_error(fmt::format("{}/{}: {} images but {} labels", FASHION_DIR, prefix, images.dims[0], labels.dims[0]));
  features = static_cast<int>(images.dims[1] * images.dims[2]);
  const std::size_t n = limit > 0 ? std::min<std::size_t>(limit, images.dims[0]) : images.dims[0];
  const auto f = static_cast<std::size_t>(features);
  x.resize(n * f);
  y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < f; ++j)
      x[i * f + j] = static_cast<float>(static_cast<unsigned char>(images.data[images.offset + i * f + j])) / 255.0F;
    y[i] = static_cast<std::uint8_t>(labels.data[labels.offset + i]);
    if (y[i] >= 10) throw std::runtime_error(fmt::format("{}/{}: label {} out of 0..9", FASHION_DIR, prefix, int{y[i]}));
  }
}

Dataset fashion_mnist(std::size_t train_limit, std::size_t test_limit) {
  Dataset d;
  d.name = "fashion_mnist";
  d.source = fmt::format("{}/{{train,t10k}}-{{images-idx3,labels-idx1}}-ubyte.gz", FASHION_DIR);
  d.classes = 10;
  int test_features = 0;
  read_fashion_split("train", train_limit, d.train_x, d.train_y, d.features);
  read_fashion_split("t10k", test_limit, d.test_x, d.test_y, test_features);
  if (test_features != d.features) throw std::runtime_error("fashion-mnist: train and test images differ in size");
  return d;
}

Dataset digits(std::size_t train_limit, std::size_t test_limit) {
  const std::string text = read_gzip(DIGITS_FILE, "python3-sklearn");
  constexpr int FEATURES = 64;
  std::vector<std::array<float, FEATURES>> x;
  std::vector<std::uint8_t> y;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) {
      std::array<float, FEATURES> row{};
      std::size_t at = pos;
      for (int j = 0; j <= FEATURES; ++j) {
        std::size_t next = text.find(',', at);
        if (next == std::string::npos || next > end) next = end;
        const std::string cell = text.substr(at, next - at);
        char* stop = nullptr;
        const double v = std::strtod(cell.c_str(), &stop);
        if (cell.empty() || stop != cell.c_str() + cell.size() || !(v >= 0 && v <= 16) || (j == FEATURES && v > 9) ||
            (j < FEATURES && next == end))
          throw std::runtime_error(fmt::format("\"{}\": row {} is not 64 pixels in 0..16 and a label in 0..9", DIGITS_FILE,
                                               y.size() + 1));
        if (j < FEATURES) row[static_cast<std::size_t>(j)] = static_cast<float>(v / 16.0);
        else y.push_back(static_cast<std::uint8_t>(v));
        at = next + 1;
      }
      x.push_back(row);
    }
    pos = end + 1;
  }
  if (y.size() < 10) throw std::runtime_error(fmt::format("\"{}\": {} rows, expected 1797", DIGITS_FILE, y.size()));
  // A fixed permutation (seed 0, whatever the scenario's seed): the same split in every run.
  std::vector<std::size_t> order(y.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(0);
  shuffle(order, rng);
  const std::size_t train_n = y.size() * 4 / 5;
  Dataset d;
  d.name = "digits";
  d.source = DIGITS_FILE;
  d.features = FEATURES;
  d.classes = 10;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const bool train = k < train_n;
    auto& xs = train ? d.train_x : d.test_x;
    auto& ys = train ? d.train_y : d.test_y;
    const std::size_t limit = train ? train_limit : test_limit;
    if (limit > 0 && ys.size() >= limit) continue;
    xs.insert(xs.end(), x[order[k]].begin(), x[order[k]].end());
    ys.push_back(y[order[k]]);
  }
  return d;
}

}  // namespace

const char* dataset_names() { return "fashion_mnist, digits"; }

std::string dataset_location(const std::string& name) {
  return name == "digits" ? std::string(DIGITS_FILE) : std::string(FASHION_DIR);
}

Dataset load_dataset(const std::string& name, std::size_t train_limit, std::size_t test_limit) {
  if (name == "fashion_mnist") return fashion_mnist(train_limit, test_limit);
  if (name == "digits") return digits(train_limit, test_limit);
  throw std::invalid_argument(fmt::format("unknown dataset \"{}\" (valid: {})", name, dataset_names()));
}

}  // namespace ddlsim::models::convergence
