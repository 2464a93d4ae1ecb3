// ddlsim: encode and decode compute time of gradient compressors, from cost tables.
//
// Per compressor and device (seed 002: t_step(c) = t_compute + t_sync(c) + t_IO +
// t_comp-decomp(c)):
//     cost(n, k) = fixed_s + per_element_s * n + n_log_k_s * n * log2(k)
// n = dense fp32 elements of the bucket, k = kept elements (the n log k term is exact
// top-k selection's). A table is a JSON file (scenarios/compressor_costs/*.json, made by
// tools/measure_compressors.py or from publications; schema in docs/compression_costs.md):
//   {"device": "...", "source": "...", "method": "...", "compression_ratio": 0.01,
//    "compressors": {"topk": {"encode": {"fixed_s": .., "per_element_s": .., "n_log_k_s": ..},
//                             "decode": {...}, "max_fit_error": ..}, ...}}
#pragma once

#include "models/json_reader.hpp"

#include <map>
#include <string>

namespace ddlsim::models {

struct CostTerms {
  double fixed_s = 0;
  double per_element_s = 0;
  double n_log_k_s = 0;
  /// Seconds for n dense elements of which k are kept (k <= 1: no log term).
  [[nodiscard]] double at(double n, double k) const;
};

struct CompressorCost {
  CostTerms encode;
  CostTerms decode;
};

class CompressionCostTable {
 public:
  /// Validates a table document; errors are ConfigErrors at JSON paths under `path`.
  static CompressionCostTable read(const json& doc, const std::string& path);
  /// Reads and validates a table file named at `ref_path` of a scenario: errors are
  /// ConfigError(ref_path, "in compressor cost table \"FILE\": /compressors/topk/...: ...").
  static CompressionCostTable load(const std::string& file, const std::string& ref_path);

  /// The costs of `compressor`, or nullptr if the table has none.
  [[nodiscard]] const CompressorCost* find(const std::string& compressor) const;
  [[nodiscard]] std::vector<std::string> names() const;
  std::string device;
  std::string source;

 private:
  std::map<std::string, CompressorCost> costs_;
};

}  // namespace ddlsim::models
