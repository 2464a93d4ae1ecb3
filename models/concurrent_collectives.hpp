// ddlsim: collectives in flight at once on one communication stream, in closed form
// (analytic fidelity with training.bucketing.max_inflight > 1).
//
// A framework launches its bucket collectives in order and runs up to K of them at
// once (PyTorch's ProcessGroupGloo: a pool of 2 threads taking work from one FIFO
// queue; ProcessGroupNCCL: one stream per process group, so K = 1). Collective j
// starts at
//     s_j = max(ready_j, s_{j-1}, the first time fewer than K collectives are running)
// and costs its closed form split into a latency term L_j (call cost + alpha terms)
// and a transfer term T_j (beta terms). It first spends L_j alone (latency is not
// shared), then its transfer: the collectives in their transfer phase share the
// bottleneck equally (processor sharing), each progressing at rate 1 / n(t) of its T
// while n(t) of them transfer. With K = 1 this is s_j = max(ready_j, e_{j-1}),
// e_j = s_j + L_j + T_j, the sequential stream.
//
// On the reference star (every worker on one switch, split-duplex links) a ring
// all-reduce keeps one flow per rank on each link at every moment, so SimGrid's
// max-min sharing gives exactly this when the links have no latency (the call cost
// may be anything), and when the concurrent collectives are equal and start
// together (tests/engine/concurrent_collectives_test.cpp); more generally, when each
// collective's latency gaps fall while another transfers or runs alone. Flow
// fidelity differs where the gaps of concurrent collectives meet (a stepwise ring
// has 2(N - 1) of them; this closed form charges each collective's up front):
// docs/scenario.md gives a measured example.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace ddlsim::models {

struct ConcurrentCost {
  double latency_s = 0;   // not shared: call cost and the closed form's alpha terms
  double transfer_s = 0;  // alone on the network; shared with the other transfers in flight
};

struct ConcurrentSpan {
  double start_s = 0;
  double end_s = 0;
  /// The first time fewer than K of the collectives before it are running (the K-th
  /// largest end among them); 0 when fewer than K precede it.
  double admit_s = 0;
};

/// The spans of collectives j = 0..n-1 launched in order with at most `max_inflight`
/// running; `cost(j, start_s)` gives collective j's terms when it starts.
std::vector<ConcurrentSpan> schedule_concurrent(const std::vector<double>& ready_s, int max_inflight,
                                                const std::function<ConcurrentCost(std::size_t, double)>& cost);

}  // namespace ddlsim::models
