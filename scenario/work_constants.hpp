// ddlsim: the constants of the work estimate (scenario/work_estimate.hpp for `ddlsim run`,
// app/compare_estimate.hpp for `ddlsim collectives`), measured on the development machine.
#pragma once

namespace ddlsim::sim::work {

// The model's constants, measured on the development machine (2 cores, Release build; the runs
// behind them: docs/reliability.md, "Work estimate"). Times are wall seconds, sizes bytes.
inline constexpr double BASE_MEMORY = 36e6;            // the process before the platform is built
inline constexpr double HOST_S = 80e-6;                // per host: its SimGrid host, mailboxes, records
inline constexpr double HOST_MEMORY = 10e3;
inline constexpr double ACTOR_S = 60e-6;               // per actor: creation and start
inline constexpr double ACTOR_MEMORY = 10e3;           // its stack's touched pages and context
inline constexpr double LINK_S = 15e-6;                // per link: the graph's edge and SimGrid's link and route
inline constexpr double LINK_DEGREE_S = 43e-9;         // per link and mean host degree: routes found by scanning a host's links
inline constexpr double LINK_MEMORY = 2.9e3;
// The co-simulated training (scenario/work_estimate.cpp): measured as 3.6e9 flop/s on the
// development VM (softmax 784-10 on Fashion-MNIST, N b = 256 per step, and 10,000-sample evaluations).
inline constexpr double NUMERICS_FLOP_RATE = 3e9;
inline constexpr double NUMERICS_TRAIN_FLOPS = 6;   // per sample and parameter: forward 2, backward 4
inline constexpr double NUMERICS_EVAL_FLOPS = 2;    // per test sample and parameter: forward
inline constexpr double NUMERICS_MIX_FLOPS = 8;      // per worker and parameter: step, norms, copies, the mix
inline constexpr double COMPRESSED_COPIES = 3;       // per worker under a compressor: gradient, its copy, what it sends
inline constexpr double PEER_COPIES = 4;             // per worker: parameters, gradient, about two sent values kept
inline constexpr double UPDATE_LOG_BYTES = 120;     // per logged server update of one gradient
inline constexpr double LAYER_S = 0.8e-6;              // per profile layer: loading and planning
inline constexpr double LAYER_MEMORY = 230;            // per profile layer: the profiles and the plan
inline constexpr double WORKER_ITERATION_S = 5e-6;     // per worker and iteration: marks, records, barriers
inline constexpr double COMPUTE_CALL_S = 20e-9;        // per compute call of the trace replay (slept lazily)
inline constexpr double ANALYTIC_COLLECTIVE_S = 0.1e-6;  // per worker and bucket at analytic fidelity
inline constexpr double FLOW_S = 7e-6;                 // per SimGrid communication of a collective or a push/pull
/// A collective's flows cost FLOW_S x (1 + ranks' calls in flight / this): ResNet-50's ring all-reduce,
/// pipelined, 100 iterations, measured 17, 45, 39 and 108 us per flow at 1,024, 4,096, 16,384 and
/// 100,000 workers (docs/performance.md, "Scale"); this scale gives 9, 14, 35 and 178 us.
inline constexpr double FLOW_IN_FLIGHT_SCALE = 4096;
/// Per flow of a collective step and per flow of the same rank's step beside it (they share its
/// NIC: each start and end re-shares the bandwidth), and per flow in flight (its SimGrid comm on
/// both ends and the sharing's variables). Measured with the direct all-reduce (N - 1 flows per
/// rank and step) of 512 and 1,024 ranks on a star: 14 s and 0.64 GB, 97 s and 2.4 GB.
inline constexpr double STEP_SHARED_FLOW_S = 4e-8;
inline constexpr double FLOW_MEMORY = 2.3e3;
/// Packet fidelity: ns-3 3.37 (Debian's build) per packet and hop, ACKs included, measured on the
/// default scenario: 17-20 us with 8,948-byte segments, 43 us with 1,448 (more segments in flight,
/// which its send buffer walks per segment). The larger, so that the estimate errs on refusing.
inline constexpr double PACKET_HOP_S = 43e-6;
inline constexpr double MESSAGE_S = 14e-6;             // per point-to-point message (isend/irecv/put and its wait)
/// Per bucket, push or pull, worker x worker x server: the flows into a server share its link,
/// and every start and end re-shares the bandwidth among them.
inline constexpr double SHARED_FLOW_S = 1.1e-7;
inline constexpr double ASYNCHRONOUS_SHARING = 7;
// per push or pull on the fluid links (engine/fluid_ps.hpp), the actors' switches included: ssp on 4
// servers, ResNet-50, 25 MB buckets, 20 iterations: 7.5 us at 256 workers, 8.0 us at 1,024 (2-core machine)
inline constexpr double FLUID_FLOW_S = 8e-6;      // asp and ssp: pushes and pulls of different buckets overlap
/// Per link-trace entry replayed on one link at flow fidelity: SimGrid's profile event and the
/// re-sharing of that link's flows.
inline constexpr double TRACE_EVENT_S = 0.4e-6;
inline constexpr double TRACE_EVENT_MEMORY = 30;  // SimGrid keeps about this much per replayed entry
/// At analytic fidelity, per change of a traced network: every link's value and the alpha-beta
/// parameters evaluated again (per link), and the segment kept.
inline constexpr double TRACE_SEGMENT_LINK_S = 60e-9;
inline constexpr double TRACE_SEGMENT_MEMORY = 160;
/// The analytic fiber lane (engine/fiber_lane.hpp; no SimGrid): per host and per link of the graph
/// (loading, records, links.csv), per simulated worker (its fiber's touched stack and state) and
/// iteration (measured with every worker waking at its own time, the slowest case), per worker
/// not simulated (engine/worker_classes.hpp) and iteration (its copied records and totals), per
/// iterations.csv row.
inline constexpr double FIBER_GRAPH_ELEMENT_S = 2.9e-6;
inline constexpr double FIBER_GRAPH_ELEMENT_MEMORY = 1.1e3;
inline constexpr double FIBER_MEMORY = 13.5e3;
inline constexpr double FIBER_WORKER_ITERATION_S = 5e-6;
inline constexpr double COPIED_RECORD_S = 25e-9;
inline constexpr double FIBER_CSV_ROW_S = 125e-9;
inline constexpr double TIMELINE_EVENT_S = 1.2e-6;     // per timeline event: its label, formatting, writing
inline constexpr double CSV_ROW_BYTES = 130;           // iterations.csv, per worker and iteration
inline constexpr double TIMELINE_EVENT_BYTES = 105;    // timeline.json, per event
/// Above this many latency steps per rank, a schedule is not built to count its sends (the count
/// of steps stands for it): the estimate must stay cheap.
inline constexpr double MAX_COUNTED_STEPS = 200'000;

}  // namespace ddlsim::sim::work
