// ddlsim: what one rank of a collective does -- its operations, its steps, and a source that
// gives them one at a time (models/collective.hpp: Collective::rank_schedule, rank_phases and
// rank_steps; engine/schedule_executor.hpp runs them).
#pragma once

#include <boost/container/small_vector.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ddlsim::models {

struct RankOp {
  enum class Kind { SEND, RECV };
  Kind kind = Kind::SEND;
  int peer = 0;        // rank index in the group
  double bytes = 0;    // may be fractional
};

struct RankStep {
  /// Most steps have one send and one receive: kept inline, no heap allocation.
  boost::container::small_vector<RankOp, 2> ops;
  /// Number of algorithm steps this entry stands for. 1 in a stepwise schedule;
  /// a pipelined phase merges k steps into one flow and pays (k-1) extra latencies.
  int latency_steps = 1;
  /// 0: a lockstep step (the rank waits for every op of this step before the next). w >= 1: a
  /// windowed step, as gloo's ring runs its iterations (models/collectives/gloo_ring.cpp): before
  /// posting this step's ops the rank waits for those of the step w before it, receives first, so
  /// that w steps are in flight; a lockstep step or the end of the schedule waits for all of them.
  /// Under a library with a receiver-ready rendezvous a windowed receive lets its data leave one
  /// path latency after it is posted (the notice), not a fixed handshake per step.
  std::uint8_t window = 0;
};

/// A rank's schedule given one step at a time: running a stepwise collective then holds one
/// step per rank instead of every step (a ring's 2(N-1) per rank are 2 GB at N = 4096).
class StepSource {
 public:
  virtual ~StepSource() = default;
  /// Writes the next step into `step`; false once every step has been given.
  virtual bool next(RankStep& step) = 0;
  /// Steps it holds in memory (for the work estimate).
  [[nodiscard]] virtual std::size_t held() const = 0;
};

/// A schedule already built, given step by step.
class ScheduleSource final : public StepSource {
 public:
  explicit ScheduleSource(std::vector<RankStep> steps) : steps_(std::move(steps)) {}
  bool next(RankStep& step) override {
    if (next_ == steps_.size()) return false;
    step = steps_[next_++];
    return true;
  }
  [[nodiscard]] std::size_t held() const override { return steps_.size(); }

 private:
  std::vector<RankStep> steps_;
  std::size_t next_ = 0;
};

/// `count` copies of one step (every step of a ring).
class RepeatedStep final : public StepSource {
 public:
  RepeatedStep(RankStep step, std::int64_t count) : step_(std::move(step)), left_(count) {}
  bool next(RankStep& step) override {
    if (left_ <= 0) return false;
    --left_;
    step = step_;
    return true;
  }
  [[nodiscard]] std::size_t held() const override { return 1; }

 private:
  RankStep step_;
  std::int64_t left_;
};

}  // namespace ddlsim::models
