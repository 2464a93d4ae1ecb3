// ddlsim: the per-bucket compression plan (scenario/compression_plan.hpp).
#include "scenario/compression_plan.hpp"

#include "models/artopk_choice.hpp"

namespace ddlsim::sim {

std::vector<models::BucketCompression> compress_buckets(const Scenario& scenario, const std::vector<models::Bucket>& buckets) {
  if (scenario.training.compressor.name == "none") return {};
  return compress_buckets(scenario, *scenario.training.compressor_model, buckets);
}

std::vector<models::BucketCompression> compress_buckets(const Scenario& scenario, const models::Compressor& comp,
                                                        const std::vector<models::Bucket>& buckets) {
  std::vector<models::BucketCompression> out;
  const auto& cost = scenario.training.compression_cost.cost;
  const double workers = scenario.platform.workers;
  const double servers = scenario.platform.parameter_servers;
  for (const auto& b : buckets) {
    const auto e = comp.encode(b.bytes);
    const double n = b.bytes / models::DENSE_ELEMENT_BYTES;
    if (scenario.training.sync_model->traits().uses_servers) {
      // Each worker pushes its encoding, one shard to each server; a server decodes every push.
      out.push_back(models::BucketCompression{e.wire_bytes, cost.encode.at(n, e.kept_elements), 0,
                                              cost.decode.at(n / servers, e.kept_elements / servers)});
      continue;
    }
    const bool gathered = e.aggregation == models::Aggregation::GATHER;
    // AR-Topk's collectives are called with M_c, one worker's values (its indices cost the same).
    const double sent = e.aggregation == models::Aggregation::ARTOPK ? e.value_bytes : e.wire_bytes;
    // A gathered bucket is an all-gather of every worker's encoding, and each is decoded.
    out.push_back(models::BucketCompression{gathered ? workers * sent : sent,
                                            cost.encode.at(n, e.kept_elements),
                                            (gathered ? workers : 1.0) * cost.decode.at(n, e.kept_elements), 0});
  }
  return out;
}

double kept_fraction(const models::Compressor& comp, const std::vector<models::Bucket>& buckets) {
  double kept = 0, dense = 0;
  for (const auto& b : buckets) {
    kept += comp.encode(b.bytes).kept_elements;
    dense += b.bytes / models::DENSE_ELEMENT_BYTES;
  }
  return dense > 0 ? kept / dense : 1.0;
}

std::vector<int> selecting_workers(const Scenario& scenario) {
  const auto& comp = *scenario.training.compressor_model;
  if (comp.aggregation() != models::Aggregation::ARTOPK) return {};
  const std::string selection = comp.settings().at("selection").get<std::string>();
  std::vector<int> out;
  for (int it = 0; it < scenario.workload.iterations; ++it)
    out.push_back(models::artopk_root(selection, it, scenario.platform.workers, scenario.seed));
  return out;
}

}  // namespace ddlsim::sim
