// The real datasets, read from Debian's packages (dataset-fashion-mnist; python3-sklearn's digits).
#include "models/convergence/dataset.hpp"

#include <doctest/doctest.h>
#include <algorithm>
#include <filesystem>
#include <set>

using namespace ddlsim::models::convergence;

TEST_CASE("fashion_mnist: 60000 + 10000 images of 784 pixels in 0 to 1 and 10 balanced classes") {
  const Dataset d = load_dataset("fashion_mnist");
  CHECK(d.features == 784);
  CHECK(d.classes == 10);
  REQUIRE(d.train_size() == 60000);
  CHECK(d.test_size() == 10000);
  CHECK(d.train_x.size() == 60000U * 784U);
  CHECK(*std::max_element(d.train_x.begin(), d.train_x.end()) == 1.0F);
  CHECK(*std::min_element(d.train_x.begin(), d.train_x.end()) == 0.0F);
  std::vector<int> count(10);
  for (auto y : d.train_y) ++count[y];
  CHECK(std::all_of(count.begin(), count.end(), [](int c) { return c == 6000; }));  // the dataset's own balance
  const Dataset small = load_dataset("fashion_mnist", 100, 50);
  CHECK(small.train_size() == 100);
  CHECK(small.test_size() == 50);
  CHECK(std::equal(small.train_x.begin(), small.train_x.end(), d.train_x.begin()));  // the first samples
}

TEST_CASE("digits: 1797 images of 64 pixels and a fixed 80/20 split") {
  if (!std::filesystem::exists(dataset_location("digits"))) {
    MESSAGE("skipped: python3-sklearn is not installed");
    return;
  }
  const Dataset d = load_dataset("digits");
  CHECK(d.features == 64);
  CHECK(d.train_size() == 1437);
  CHECK(d.test_size() == 360);
  CHECK(*std::max_element(d.train_x.begin(), d.train_x.end()) == 1.0F);
  const Dataset again = load_dataset("digits");
  CHECK(again.train_y == d.train_y);
  CHECK(std::set<int>(d.test_y.begin(), d.test_y.end()).size() == 10);
}

TEST_CASE("an unknown dataset names the valid ones") {
  CHECK_THROWS_WITH((void)load_dataset("cifar"), "unknown dataset \"cifar\" (valid: fashion_mnist, digits)");
}
