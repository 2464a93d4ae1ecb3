// ddlsim: "training.bucketing" -- how gradients are fused into buckets and how many bucket
// collectives a worker's communication stream runs at once (docs/scenario.md).
#include "scenario/scenario.hpp"

#include <fmt/format.h>

namespace ddlsim::sim {
namespace {

constexpr int MAX_INFLIGHT = 64;
constexpr double MAX_CYCLE_S = 1.0;

struct PolicyName {
  BucketingPolicy policy;
  const char* name;
};
constexpr PolicyName POLICIES[] = {{BucketingPolicy::SIZE, "size"},
                                   {BucketingPolicy::MGWFBP, "mgwfbp"},
                                   {BucketingPolicy::DDP, "ddp"},
                                   {BucketingPolicy::HOROVOD, "horovod"}};

/// A key that only some policies read: refused, naming them, under any other.
void only_with(ObjectReader& b, const std::string& key, const std::vector<BucketingPolicy>& policies,
               BucketingPolicy policy) {
  if (!b.has(key)) return;
  std::string names;
  for (auto p : policies) {
    if (p == policy) return;
    names += fmt::format("{}\"{}\"", names.empty() ? "" : " or ", to_string(p));
  }
  throw ConfigError(b.path_of(key), fmt::format("only with \"policy\": {}, not \"{}\"", names, to_string(policy)));
}

}  // namespace

std::string to_string(BucketingPolicy p) {
  for (const auto& entry : POLICIES)
    if (entry.policy == p) return entry.name;
  return "?";
}

BucketingSpec read_bucketing(ObjectReader& b) {
  BucketingSpec spec;
  std::vector<std::string> names;
  for (const auto& entry : POLICIES) names.emplace_back(entry.name);
  const std::string policy = b.choice("policy", names, "size");
  for (const auto& entry : POLICIES)
    if (policy == entry.name) spec.policy = entry.policy;
  using P = BucketingPolicy;
  only_with(b, "bucket_bytes", {P::SIZE, P::DDP}, spec.policy);
  only_with(b, "first_bucket_bytes", {P::DDP}, spec.policy);
  only_with(b, "fusion_threshold_bytes", {P::HOROVOD}, spec.policy);
  only_with(b, "cycle_time", {P::HOROVOD}, spec.policy);
  // DDP's bucket_cap_mb = 25 means 25 MiB; the size-cap policy keeps its 25 MB.
  spec.bucket_bytes = b.bytes("bucket_bytes", spec.policy == P::DDP ? 25.0 * 1024 * 1024 : 25e6);
  spec.first_bucket_bytes = b.bytes("first_bucket_bytes", spec.first_bucket_bytes);
  spec.fusion_threshold_bytes = b.bytes("fusion_threshold_bytes", spec.fusion_threshold_bytes);
  spec.cycle_s = b.time_s("cycle_time", spec.cycle_s);
  if (spec.cycle_s > MAX_CYCLE_S)
    throw ConfigError(b.path_of("cycle_time"),
                      fmt::format("a cycle time must be in [0, {} s] (HOROVOD_CYCLE_TIME is in milliseconds: write "
                                  "\"1ms\"; a bare number is seconds), got {} s",
                                  MAX_CYCLE_S, spec.cycle_s));
  spec.max_inflight = static_cast<int>(b.integer("max_inflight", 1, 1, MAX_INFLIGHT));
  spec.overlap = b.boolean("overlap", true);
  return spec;
}

void check_bucketing(const Scenario& s) {
  const auto& b = s.training.bucketing;
  const auto& sync = *s.training.sync_model;
  const auto& coll = *s.training.collective_algorithm;
  if (b.max_inflight > 1) {
    const std::string path = "/training/bucketing/max_inflight";
    if (!sync.traits().uses_collective)
      throw ConfigError(path, fmt::format("concurrent collectives apply to all-reduces; sync model \"{}\" {}: use 1",
                                          s.training.sync.name,
                                          sync.traits().uses_servers ? "aggregates through parameter servers"
                                                              : "runs no all-reduce"));
    if (coll.uses_servers())
      throw ConfigError(path, fmt::format("collective \"{}\" runs its all-reduces through the parameter servers one "
                                          "at a time: use 1, or a collective without servers",
                                          s.training.collective.name));
    if (s.network.fidelity == Fidelity::ANALYTIC && !s.network.link_traces.empty())
      throw ConfigError(path, "at analytic fidelity, concurrent all-reduces share their closed forms' transfer "
                              "terms, which time-varying links (network.link_traces) leave undefined: use 1, or "
                              "\"fidelity\": \"flow\"");
  }
  if (b.policy == BucketingPolicy::HOROVOD) {
    if (!sync.traits().allreduces_in_backward)
      throw ConfigError("/training/bucketing/policy",
                        fmt::format("\"horovod\" launches gradient all-reduces at the background thread's cycles "
                                    "during backward; sync model \"{}\" does not all-reduce its gradients as they "
                                    "become ready: use \"size\" or \"ddp\"",
                                    s.training.sync.name));
    if (s.training.compressor.name != "none")
      throw ConfigError("/training/bucketing/policy",
                        "\"horovod\" plans its cycles from the profile's backward times, which a compressor's encode "
                        "before each submit would shift: use \"size\" (with \"bucket_bytes\" as the fusion "
                        "threshold) with a compressor");
  }
}

json bucketing_settings(const BucketingSpec& b) {
  json j;
  j["bucketing_policy"] = to_string(b.policy);
  if (b.policy == BucketingPolicy::SIZE || b.policy == BucketingPolicy::DDP) j["bucket_bytes"] = b.bucket_bytes;
  if (b.policy == BucketingPolicy::DDP) j["first_bucket_bytes"] = b.first_bucket_bytes;
  if (b.policy == BucketingPolicy::HOROVOD) {
    j["fusion_threshold_bytes"] = b.fusion_threshold_bytes;
    j["cycle_time_s"] = b.cycle_s;
  }
  j["max_inflight"] = b.max_inflight;
  return j;
}

}  // namespace ddlsim::sim
