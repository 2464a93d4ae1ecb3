#include "models/concurrent_collectives.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>

namespace ddlsim::models {
namespace {

struct Running {
  std::size_t job = 0;
  double latency_end_s = 0;
  double work_s = 0;  // transfer seconds left, at the full bottleneck
  bool transferring = false;
};

}  // namespace

std::vector<ConcurrentSpan> schedule_concurrent(const std::vector<double>& ready_s, int max_inflight,
                                                const std::function<ConcurrentCost(std::size_t, double)>& cost) {
  if (max_inflight < 1) throw std::invalid_argument("schedule_concurrent: max_inflight must be at least 1");
  constexpr double INF = std::numeric_limits<double>::infinity();
  const std::size_t n = ready_s.size();
  const auto k = static_cast<std::size_t>(max_inflight);
  std::vector<ConcurrentSpan> spans(n);
  std::vector<Running> running;
  std::size_t next = 0;
  double t = n > 0 ? ready_s[0] : 0;
  double last_start = -INF;
  while (next < n || !running.empty()) {
    // The next event: a start, the end of a latency phase, or the end of a transfer.
    const double start = next < n && running.size() < k ? std::max({ready_s[next], last_start, t}) : INF;
    double latency_end = INF, least_work = INF;
    std::size_t sharing = 0;
    for (const auto& r : running) {
      if (r.transferring) {
        ++sharing;
        least_work = std::min(least_work, r.work_s);
      } else {
        latency_end = std::min(latency_end, r.latency_end_s);
      }
    }
    const double transfer_end = sharing > 0 ? t + least_work * static_cast<double>(sharing) : INF;
    const double event = std::min({start, latency_end, transfer_end});
    const bool finishing = sharing > 0 && event == transfer_end;
    const double progress = sharing > 0 ? (event - t) / static_cast<double>(sharing) : 0;
    t = event;
    // Transfers progress; the ones with the least work left end now (ties end together).
    std::vector<Running> still;
    for (auto r : running) {
      if (r.transferring) {
        const bool done = finishing && r.work_s <= least_work * (1 + 1e-12);
        r.work_s = std::max(0.0, r.work_s - progress);
        if (done) {
          spans[r.job].end_s = t;
          continue;
        }
      } else if (r.latency_end_s <= t) {
        r.transferring = true;  // its latency is paid: it joins the transfers from now on
      }
      still.push_back(r);
    }
    running = std::move(still);
    if (event == start && running.size() < k) {
      const ConcurrentCost c = cost(next, t);
      spans[next].start_s = t;
      running.push_back(Running{next, t + c.latency_s, c.transfer_s, false});
      last_start = t;
      ++next;
    }
  }
  // admit_j: the K-th largest end among the collectives before j.
  std::vector<double> ends;
  for (std::size_t j = 0; j < n; ++j) {
    if (ends.size() >= k) {
      std::nth_element(ends.begin(), ends.begin() + static_cast<std::ptrdiff_t>(k - 1), ends.end(), std::greater<>());
      spans[j].admit_s = ends[k - 1];
    }
    ends.push_back(spans[j].end_s);
  }
  return spans;
}

}  // namespace ddlsim::models
