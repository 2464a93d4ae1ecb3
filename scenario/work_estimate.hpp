// ddlsim: how much work a run is, estimated before it starts.
//
// A linear model of the run's wall time, memory and output size from its counts (workers,
// servers, links, actors, layers, buckets, flows per collective call, iterations), with
// constants measured on the development machine (docs/reliability.md, "Work estimate").
// `ddlsim run` refuses a run whose memory exceeds what the machine has available, whose
// outputs exceed the free disk space, or whose wall time exceeds MAX_WALL_S, unless --force;
// the progress display uses the wall-time estimate until the first iteration completes.
#pragma once

#include "models/collective.hpp"
#include "models/sync_model.hpp"
#include "scenario/scenario.hpp"

#include <optional>
#include <string>

namespace ddlsim::sim {

/// What the estimate reads: the scenario and the plan simulate() made for it.
struct WorkPlan {
  const Scenario& scenario;
  const models::TrainingPlan& plan;
  const models::CollectiveGroup& group;
  const models::AlphaBeta& ab;
  /// RunOptions::every_worker (--every-worker): no classes of identical workers.
  bool every_worker = false;
};

/// One term of the estimate, and the JSON path that scales it (named when it makes a run too big).
struct WorkTerm {
  std::string what;  // e.g. "collective flows"
  std::string path;  // e.g. "/training/collective"
  double wall_s = 0;
  double memory_bytes = 0;
};

struct WorkEstimate {
  std::string subject = "this run";  // what the messages call it ("this comparison": ddlsim collectives)
  std::string unit = "iteration";    // what `iterations` counts ("collective call")
  int iterations = 0;
  double events = 0;           // engine activities: compute calls, flows, analytic collectives, server updates
  double events_per_iteration = 0;
  double flows = 0;            // SimGrid communications
  double trace_events = 0;     // link-trace changes replayed (included in events)
  double simulated_workers = 0;  // workers simulated one by one (fewer: classes of identical workers)
  double setup_s = 0;          // building the platform and the actors
  double per_iteration_s = 0;
  double wall_s = 0;           // setup + iterations x per iteration + writing the outputs
  double memory_bytes = 0;     // peak resident memory
  double output_bytes = 0;     // iterations.csv and timeline.json
  double csv_bytes = 0;
  double timeline_bytes = 0;
  std::vector<WorkTerm> terms;
};

/// The largest estimated wall time `ddlsim run` starts without --force or --max-time (one hour).
inline constexpr double MAX_WALL_S = 3600;

WorkEstimate estimate_work(const WorkPlan& plan);

/// The co-simulated training's term, per iteration (wall) and for the run (memory); none without
/// training.convergence (scenario/work_estimate_convergence.cpp).
std::optional<WorkTerm> convergence_work_term(const Scenario& s, double workers, double iterations, double buckets,
                                              double servers);

/// Per collective call of `bytes` at flow fidelity, for rank `rank`: its sends, the steps it holds
/// at once (a generated schedule: one), the sum over its steps of the step's sends squared (a
/// step's flows share its NIC: each start and end re-shares the bandwidth among them), and the
/// most sends of one step (its flows in flight at once). Above MAX_COUNTED_STEPS latency steps
/// (the closed form with alpha = 1, beta = 0) the schedule is not built: the count of steps
/// stands for them, one send each.
struct CallShape {
  double sends = 0;
  double steps = 0;
  double shared = 0;
  double widest = 0;
  double bytes_sent = 0;  // by the rank, over the call
};
CallShape collective_call_shape(const models::Collective& algo, int rank, const models::CollectiveGroup& group,
                                double bytes, bool stepwise);

/// What the run may use: the memory available (MemAvailable, or the cgroup's limit if lower;
/// or --max-memory), the free space where the outputs go (-1 where it cannot be read) and the
/// wall time (MAX_WALL_S, or --max-time).
struct MachineLimits {
  double memory_bytes = -1;
  double disk_bytes = -1;
  double wall_s = MAX_WALL_S;
  bool memory_given = false;  // --max-memory, not what the machine has
  bool wall_given = false;    // --max-time
};
MachineLimits machine_limits(const std::string& output_dir);
/// The same with --max-time and --max-memory (empty: not given) in their place, as `run` and the
/// other commands check an estimate against them (app/estimate_options.cpp).
MachineLimits limits_with_options(const std::string& output_dir, const std::string& max_time,
                                  const std::string& max_memory);

/// Throws ConfigError, naming the JSON path whose value makes the run too big and giving the
/// estimate, when `estimate` exceeds `limits`.
void check_work(const WorkEstimate& estimate, const MachineLimits& limits);

/// "1.2 h", "35 s", "2 min".
std::string format_duration(double seconds);

}  // namespace ddlsim::sim
