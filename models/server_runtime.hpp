// ddlsim: the parameter-server side of the Runtime facade (models/sync_model.hpp): the pushes a
// server receives, its clocks for bounded staleness, and the ServerRuntime a sync model's server
// loop is written against (engine/servers.cpp implements it on SimGrid).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ddlsim::models {

struct Push {
  int worker = 0;
  int bucket = 0;
  double bytes = 0;               // bytes received by this server
  std::int64_t seen_version = 0;  // the version of this shard the worker last pulled
  int iteration = 0;              // the pushing worker's iteration (its clock)
};

/// Server-side clocks for bounded staleness (Ho et al. 2013): per shard (bucket), the pushes
/// each worker has made, i.e. the number of its iterations this server has seen for that shard.
class ServerClocks {
 public:
  ServerClocks(int workers, int buckets);
  void pushed(int worker, int bucket);
  [[nodiscard]] std::int64_t clock(int worker, int bucket) const { return clocks_[index(worker, bucket)]; }
  /// The slowest worker's clock on `bucket` (O(1): kept from a count of the workers per clock).
  [[nodiscard]] std::int64_t min_clock(int bucket) const;

 private:
  [[nodiscard]] std::size_t index(int worker, int bucket) const {
    return static_cast<std::size_t>(bucket) * static_cast<std::size_t>(workers_) + static_cast<std::size_t>(worker);
  }
  int workers_;
  std::vector<std::int64_t> clocks_;
  std::vector<std::map<std::int64_t, int>> at_clock_;  // per bucket: clock -> workers at it
};

class ServerRuntime {
 public:
  virtual ~ServerRuntime() = default;
  [[nodiscard]] virtual int server() const = 0;
  [[nodiscard]] virtual int servers() const = 0;
  [[nodiscard]] virtual int workers() const = 0;
  [[nodiscard]] virtual double now() = 0;
  virtual void compute(double seconds, const std::string& label) = 0;
  /// The next push from any worker (blocks).
  virtual Push receive_push() = 0;
  /// Answers `worker` with `bytes` of parameters at `version`.
  virtual void send_pull(int worker, int bucket, double bytes, std::int64_t version) = 0;
  /// Records the staleness of one applied gradient (updates applied since the worker's pull).
  virtual void record_staleness(std::int64_t staleness) = 0;
  /// Records an update of this server's shard of `bucket`: the gradients it applied, and the
  /// shard's version after it (the co-simulation replays them, models/convergence/async_replay.hpp).
  virtual void record_update(int bucket, const std::vector<Push>& applied, std::int64_t version_after) = 0;
  /// Records that `push`'s pull was held `seconds` by a staleness bound before it was answered.
  virtual void record_held(const Push& push, double seconds) = 0;
};

}  // namespace ddlsim::models
