#include "models/compressor.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::models {

std::string to_string(Aggregation a) {
  switch (a) {
    case Aggregation::SUM: return "sum";
    case Aggregation::GATHER: return "gather";
    case Aggregation::ARTOPK: return "artopk";
  }
  return "?";
}

double kept_of(double n, double ratio) {
  if (n <= 0) return 0;
  return std::max(1.0, std::ceil(ratio * n * (1 - 1e-12)));
}

SparseParams read_sparse_params(ObjectReader& params, double default_ratio) {
  SparseParams p;
  p.ratio = params.number("ratio", default_ratio, 0.0, 1.0);
  if (p.ratio <= 0) throw ConfigError(params.path_of("ratio"), "the kept fraction must be in (0, 1], got 0");
  p.error_feedback = params.boolean("error_feedback", true);
  return p;
}

Encoding sparse_encoding(double dense_bytes, double ratio) {
  Encoding e;
  e.kept_elements = kept_of(dense_bytes / DENSE_ELEMENT_BYTES, ratio);
  e.value_bytes = 4 * e.kept_elements;  // fp32 values
  e.index_bytes = 4 * e.kept_elements;  // int32 indices
  e.wire_bytes = e.value_bytes + e.index_bytes;
  e.aggregation = Aggregation::GATHER;
  return e;
}

}  // namespace ddlsim::models
