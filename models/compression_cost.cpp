#include "models/compression_cost.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::models {
namespace {

constexpr double MAX_COEFFICIENT_S = 3600.0;  // an hour per element or call is no measurement

CostTerms read_terms(ObjectReader r) {
  CostTerms t;
  t.fixed_s = r.number("fixed_s", 0, 0, MAX_COEFFICIENT_S);
  t.per_element_s = r.number("per_element_s", 0, 0, MAX_COEFFICIENT_S);
  t.n_log_k_s = r.number("n_log_k_s", 0, 0, MAX_COEFFICIENT_S);
  r.finish();
  return t;
}

}  // namespace

double CostTerms::at(double n, double k) const {
  return fixed_s + per_element_s * n + (k > 1 ? n_log_k_s * n * std::log2(k) : 0.0);
}

CompressionCostTable CompressionCostTable::read(const json& doc, const std::string& path) {
  ObjectReader root(doc, path);
  CompressionCostTable table;
  table.device = root.required_string("device");
  table.source = root.string("source", "");
  (void)root.string("method", "");
  (void)root.number("compression_ratio", 0.01, 0, 1);
  const json& compressors = root.require("compressors");
  ObjectReader all(compressors, root.path_of("compressors"));
  for (const auto& [name, value] : compressors.items()) {
    ObjectReader c = all.object(name);
    CompressorCost cost;
    cost.encode = read_terms(c.object("encode"));
    cost.decode = read_terms(c.object("decode"));
    (void)c.number("max_fit_error", 0, 0, std::numeric_limits<double>::max());
    c.finish();
    table.costs_.emplace(name, cost);
  }
  all.finish();
  root.finish();
  return table;
}

CompressionCostTable CompressionCostTable::load(const std::string& file, const std::string& ref_path) {
  return load_referenced(file, "compressor cost table", ref_path, [](const json& doc) { return read(doc, ""); });
}

const CompressorCost* CompressionCostTable::find(const std::string& compressor) const {
  auto it = costs_.find(compressor);
  return it == costs_.end() ? nullptr : &it->second;
}

std::vector<std::string> CompressionCostTable::names() const {
  std::vector<std::string> out;
  for (const auto& [name, cost] : costs_) out.push_back(name);
  return out;
}

}  // namespace ddlsim::models
