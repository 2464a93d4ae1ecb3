// ddlsim: the worker side of the Runtime facade that sync models are written against, in roles
// (WorkerCompute: compute and the stream; IterationRecords; PeerComm: point to point)
// (models/sync_model.hpp); engine/worker_runtime.cpp implements it on SimGrid, tests with fakes.
//
// Worker side:
//  - compute() spends time;
//  - submit() queues a collective (all-reduce among all workers or a subgroup)
//    or a push/pull on the worker's one communication stream (FIFO, runs
//    concurrently with compute); wait_comm() blocks until all of it finished;
//  - point to point, outside the stream: isend()/irecv() (two-sided: a transfer
//    starts when both ends have posted) and wait(); put() (one-sided: the data
//    flows at once, the receiver need not be ready) and latest() (the newest
//    put from a peer that has fully arrived, read without blocking -- MPI's
//    passive-target one-sided model, seed 000);
//  - graph(): the sync model's logical communication graph (out_peers, in_peers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::models {

class LogicalGraph;  // models/logical_graph.hpp
struct Layer;        // models/profile.hpp
namespace convergence {
class PeerTraining;  // models/convergence/peer_training.hpp
}

/// What a stretch of compute time is, for the recorder and the timeline. FRAMEWORK: the profile's
/// unattributed time and the scenario's framework overhead; COPY: a bucket's flatten or unflatten copy.
enum class Phase { IO, FORWARD, BACKWARD, OPTIMIZER, UPDATE, ENCODE, DECODE, FRAMEWORK, COPY };
std::string to_string(Phase phase);

struct CommRequest {
  enum class Kind {
    ALLREDUCE,  // aggregate `bytes` among all workers with the scenario's gradient collective (an
                // all-reduce; an all-gather of every worker's encoding under a gathering compressor)
    PUSH_PULL,  // push bytes/S to each of the S servers, then pull bytes/S back from each
    PULL,       // pull bytes/S back from each of the S servers without pushing (ordered_gradients'
                // unselected workers); the servers answer once they have the update
    ALLGATHER,       // sharded data parallelism: gather `bytes` of parameters (bytes/N from each worker)
                     // with the plan's all-gather (TrainingPlan::sharded, models/sharding.hpp)
    REDUCE_SCATTER,  // sharded data parallelism: reduce `bytes` of gradients, each worker keeping bytes/N
  };
  Kind kind = Kind::ALLREDUCE;
  int bucket = 0;
  double bytes = 0;
  /// ALLREDUCE only: the worker ranks taking part (ascending, including the caller); empty = all
  /// workers. Every member must submit the same subgroup all-reduces in the same order (as in MPI).
  std::vector<int> group;
  /// ALLREDUCE only: the worker that plays rank 0 of the collective's schedule (AR-Topk's
  /// index broadcaster); the ranks are rotated so that it does. 0: as is.
  int root = 0;
};

/// A point-to-point or one-sided message between workers.
struct Message {
  int source = -1;
  int tag = 0;
  double bytes = 0;
  std::int64_t version = -1;  // what the sender says it sends (e.g. the iteration of its model)
};

/// A point-to-point operation in flight (isend, irecv, put), to wait for once.
using CommHandle = std::int64_t;

/// Compute and the communication stream: what every engine gives every worker.
class WorkerCompute {
 public:
  virtual ~WorkerCompute() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int workers() const = 0;
  [[nodiscard]] virtual int servers() const = 0;
  /// Simulated time in seconds.
  [[nodiscard]] virtual double now() = 0;
  /// Spends `seconds` of this worker's compute (stragglers and noise are applied by the runtime).
  virtual void compute(double seconds, Phase phase, const std::string& label) = 0;
  /// compute() of each of layers [first, last) in turn, labelled with its name: FORWARD their
  /// forward_s in ascending order, BACKWARD their backward_s from last - 1 down to first. A runtime
  /// may do it in one step if the effect equals the calls one by one.
  virtual void compute_layers(const std::vector<Layer>& layers, std::size_t first, std::size_t last, Phase phase);
  /// Queues a communication on this worker's communication stream.
  virtual void submit(const CommRequest& request) = 0;
  /// Blocks until every submitted communication has finished.
  virtual void wait_comm() = 0;
  /// Blocks until the last request submitted for `bucket`, and every request queued before it on
  /// the stream (FIFO), has finished; what was queued after it may still run. By default wait_comm.
  virtual void wait_comm_through(int /*bucket*/) { wait_comm(); }
};

/// A worker's per-iteration records, and the per-iteration decisions the run makes for it.
class IterationRecords {
 public:
  virtual ~IterationRecords() = default;
  virtual void iteration_begin(int iteration) = 0;
  virtual void iteration_end(int iteration) = 0;
  /// Which of the plan's compression variants iteration `iteration` runs (adaptive compression:
  /// the candidate ratio the controller chose); -1: plan.compression. Called once per iteration,
  /// in order, before its compute.
  virtual int compression_variant(int /*iteration*/) { return -1; }
  /// Event-driven models (SyncModel::events_unit): of `possible` messages this iteration could
  /// have sent under the always-send baseline, `sent` were sent. Called once per iteration.
  virtual void record_events(std::int64_t /*sent*/, std::int64_t /*possible*/) {}
};

/// What every sync model's worker loop runs on (SyncModel::run_worker): both roles above. Each
/// engine implements it (engine/worker_runtime.cpp on SimGrid, engine/lazy_runtime.hpp on the
/// fiber lane); tests implement it with fakes (tests/models/fake_runtime.hpp).
class Runtime : public WorkerCompute, public IterationRecords {};

/// Point to point between workers, outside the communication stream (flows at every fidelity):
/// what a decentralised model needs beyond Runtime (SyncModel::run_peer_worker). The SimGrid engine
/// gives one; the analytic fiber lane has none, and the run plan (scenario/run_plan.hpp) never
/// gives it a model that exchanges point to point.
class PeerComm {
 public:
  virtual ~PeerComm() = default;
  /// This worker's rank (Runtime::rank).
  [[nodiscard]] virtual int rank() const = 0;
  /// Two-sided send of `bytes` to worker `peer`, matched by (source, destination, tag) in order.
  virtual CommHandle isend(int peer, double bytes, int tag, std::int64_t version) = 0;
  /// Two-sided receive of the next message from worker `peer` with `tag`.
  virtual CommHandle irecv(int peer, int tag) = 0;
  /// One-sided put of `bytes` to worker `peer`: the transfer starts at once, without the
  /// receiver; waiting for the handle is local completion (the data has left and arrived).
  virtual CommHandle put(int peer, double bytes, int tag, std::int64_t version) = 0;
  /// Blocks until the operation finished; a receive returns its message (others: what was sent).
  virtual Message wait(CommHandle handle) = 0;
  /// The newest put from `peer` with `tag` that has fully arrived here (nullopt: none yet); never blocks.
  virtual std::optional<Message> latest(int peer, int tag) = 0;
  /// The sync model's logical communication graph (nullptr: the model has none).
  [[nodiscard]] virtual const LogicalGraph* graph() const = 0;
  /// Records how many iterations old a neighbour's model was when it was averaged in.
  virtual void record_neighbour_staleness(std::int64_t iterations) = 0;
  /// The co-simulated training the worker loop drives (training.convergence); null without one.
  [[nodiscard]] virtual convergence::PeerTraining* training() const { return nullptr; }

  // Conveniences on top of the above.
  void send(int peer, double bytes, int tag, std::int64_t version) { wait(isend(peer, bytes, tag, version)); }
  Message recv(int peer, int tag) { return wait(irecv(peer, tag)); }
  std::vector<Message> wait_all(const std::vector<CommHandle>& handles) {
    std::vector<Message> out;
    out.reserve(handles.size());
    for (auto h : handles) out.push_back(wait(h));
    return out;
  }
  /// This rank's peers in the logical graph in `round` (empty without a graph).
  [[nodiscard]] std::vector<int> out_peers(int round) const;
  [[nodiscard]] std::vector<int> in_peers(int round) const;
};

}  // namespace ddlsim::models
