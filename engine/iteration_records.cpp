#include "engine/iteration_records.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ddlsim::sim {
namespace {

/// Linear interpolation between closest ranks (numpy's default) over `n` sorted values,
/// the k-th given by `nth`.
template <class Nth>
double interpolate(std::int64_t n, double q, Nth nth) {
  if (n == 0) return 0;
  const double pos = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::int64_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, n - 1);
  const double a = nth(lo), b = nth(hi);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

const double LOG_BASE = std::log1p(Quantiles::BIN_WIDTH);

}  // namespace

std::int64_t Histogram::bin_of(std::int64_t value) {
  if (value < EXACT_BELOW) return value;
  const int shift = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(value))) - BIN_BITS;
  return (value >> shift) << shift;
}

void Histogram::fold() {
  std::map<std::int64_t, std::int64_t> bins;
  for (const auto& [value, n] : counts) bins[bin_of(value)] += n;
  counts = std::move(bins);
  binned = true;
}

double Histogram::quantile(double q) const {
  return interpolate(total, q, [this](std::int64_t rank) {
    for (const auto& [value, n] : counts) {
      if (rank < n) return static_cast<double>(value);
      rank -= n;
    }
    return static_cast<double>(counts.rbegin()->first);
  });
}

void Quantiles::add(double value) {
  ++count_;
  if (exact()) {
    exact_.push_back(value);
    if (exact_.size() <= EXACT_LIMIT) return;
    for (double v : exact_) bin(v);
    exact_ = {};
    return;
  }
  bin(value);
}

void Quantiles::add(double value, std::int64_t count) {
  if (count <= 0) return;
  if (exact() && exact_.size() + static_cast<std::size_t>(count) <= EXACT_LIMIT) {
    count_ += count;
    exact_.insert(exact_.end(), static_cast<std::size_t>(count), value);
    return;
  }
  // Past the limit, as add() one by one: every value held so far binned, then these.
  count_ += count;
  if (exact()) {
    for (double v : exact_) bin(v);
    exact_ = {};
  }
  bin(value, count);
}

void Quantiles::bin(double value, std::int64_t count) {
  if (value <= 0) {
    zeros_ += count;
    return;
  }
  bins_[static_cast<std::int64_t>(std::floor(std::log(value) / LOG_BASE))] += count;
}

double Quantiles::nth(std::int64_t rank) const {
  if (rank < zeros_) return 0;
  rank -= zeros_;
  for (const auto& [bin, n] : bins_) {
    if (rank < n) return std::exp((static_cast<double>(bin) + 0.5) * LOG_BASE);
    rank -= n;
  }
  return std::exp((static_cast<double>(bins_.rbegin()->first) + 0.5) * LOG_BASE);
}

double Quantiles::quantile(double q) const {
  if (!exact()) return interpolate(count_, q, [this](std::int64_t rank) { return nth(rank); });
  std::vector<double> sorted = exact_;
  std::sort(sorted.begin(), sorted.end());
  return interpolate(count_, q, [&sorted](std::int64_t rank) { return sorted[static_cast<std::size_t>(rank)]; });
}

namespace {

void add_record(WorkerTotals& t, const IterationRecord& r) {
  ++t.iterations;
  t.duration_s += r.end_s - r.start_s;
  t.compute_s += r.compute_s;
  t.exposed_comm_s += r.exposed_comm_s;
  t.comm_busy_s += r.comm_busy_s;
  t.straggler_wait_s += r.straggler_wait_s;
  t.staleness_wait_s += r.staleness_wait_s;
  t.codec_s += r.codec_s;
  if (r.events_sent >= 0) {
    t.events_sent += r.events_sent;
    t.events_possible += r.events_possible;
  }
}

}  // namespace

void IterationTotals::add_global_step(const std::vector<IterationRecord>& records) {
  if (records.empty()) return;
  double start = records.front().start_s, end = records.front().end_s;
  for (const auto& r : records) {
    start = std::min(start, r.start_s);
    end = std::max(end, r.end_s);
  }
  if (iterations == 0) global_start_s = start;
  const double from = iterations == 0 ? start : global_end_s;
  global_steps.add(std::max(0.0, end - from));
  global_end_s = std::max(global_end_s, end);
}

void IterationTotals::add(const std::vector<IterationRecord>& records, const IterationCompression& compression) {
  add_global_step(records);
  ++iterations;
  if (workers.size() < records.size()) workers.resize(records.size());
  for (std::size_t w = 0; w < records.size(); ++w) {
    add_record(workers[w], records[w]);
    durations.add(records[w].end_s - records[w].start_s);
  }
  ++iterations_per_variant[compression.variant];
  exploring += compression.exploring ? 1 : 0;
}

void IterationTotals::add(const std::vector<IterationRecord>& records, const std::vector<int>& slot_of,
                          const IterationCompression& compression) {
  add_global_step(records);  // every slot's record is some worker's
  ++iterations;
  if (workers.size() < slot_of.size()) workers.resize(slot_of.size());
  std::vector<std::int64_t> copies(records.size(), 0);
  for (std::size_t w = 0; w < slot_of.size(); ++w) {
    const auto s = static_cast<std::size_t>(slot_of[w]);
    add_record(workers[w], records[s]);
    ++copies[s];
  }
  // The quantiles do not depend on the order the values came in.
  for (std::size_t s = 0; s < records.size(); ++s) durations.add(records[s].end_s - records[s].start_s, copies[s]);
  ++iterations_per_variant[compression.variant];
  exploring += compression.exploring ? 1 : 0;
}

void RecordSink::iteration_by_class(int iteration, const std::vector<IterationRecord>& records,
                                    const std::vector<int>& slot_of, const IterationCompression& compression) {
  std::vector<IterationRecord> workers;
  workers.reserve(slot_of.size());
  for (const int s : slot_of) workers.push_back(records[static_cast<std::size_t>(s)]);
  this->iteration(iteration, workers, compression);
}

}  // namespace ddlsim::sim
