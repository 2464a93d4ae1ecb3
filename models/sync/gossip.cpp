// Gossip / decentralised parallel SGD: no parameter server, no global model,
// no global barrier (seed 001: aggregation by gossip; seed 000: averaging with
// neighbours on a logical graph).
//
// "synchronous" (D-PSGD, Lian et al., "Can decentralized algorithms outperform
// centralized algorithms?", NeurIPS 2017): each iteration a worker replays its
// compute and optimizer step, sends its model to its out-peers in the logical
// graph and receives its in-peers' models of the same iteration (two-sided,
// all at once), then averages: x_i <- (x_i + sum of received) / (|in| + 1).
// Iteration t + 1 starts once the in-peers' iteration-t models have arrived, so
// a slow worker delays its neighbours first, and its delay spreads at most one
// logical hop per iteration.
//
// "asynchronous" (AD-PSGD, Lian et al., "Asynchronous decentralized parallel
// stochastic gradient descent", ICML 2018): after its step a worker waits for
// its previous models to have left (one model in flight per out-peer), puts its
// new model to its out-peers one-sidedly, and averages with the newest model of
// each in-peer that has arrived, whatever its age; the age in iterations of each
// averaged model is recorded (a peer not heard from yet counts from iteration -1,
// the shared initial model).
//
// The model is one message of the profile's parameter bytes (= gradient bytes). With
// training.convergence the real model is stepped, sent and mixed as above (adapt, then combine:
// x <- mix(x - lr g(x))), with exactly the models the simulation delivered (docs/convergence.md).
// Logical graphs (models/logical_graph.hpp) follow the platform's routes, so a
// logical ring on a fat tree meets contention where its routes share links.
#include "models/convergence/peer_training.hpp"
#include "models/logical_graph.hpp"
#include "models/sync_model.hpp"

namespace ddlsim::models {
namespace {

constexpr int MODEL_TAG = 0;

class Gossip final : public SyncModel {
 public:
  Gossip(GraphSpec graph, bool asynchronous) : graph_(std::move(graph)), asynchronous_(asynchronous) {}

  void run_peer_worker(Runtime& rt, PeerComm& p2p, const TrainingPlan& plan) const override {
    const double model_bytes = plan.profile->grad_bytes();
    // Co-simulated training (training.convergence): the worker's real model, stepped, sent and
    // mixed with the models the simulation delivered (models/convergence/peer_training.hpp).
    convergence::PeerTraining* train = p2p.training();
    constexpr int WHOLE = convergence::PeerTraining::WHOLE;
    const int r = p2p.rank();
    std::vector<CommHandle> in_flight;
    std::vector<std::pair<int, std::int64_t>> got;
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      replay_compute(rt, plan, true);
      if (train != nullptr) {
        train->gradient(r);
        train->step(r);
      }
      got.clear();
      if (asynchronous_) {
        p2p.wait_all(in_flight);
        in_flight.clear();
        const auto out = p2p.out_peers(it);
        if (train != nullptr) train->publish(r, WHOLE, it, out);
        for (int peer : out) in_flight.push_back(p2p.put(peer, model_bytes, MODEL_TAG, it));
        for (int peer : p2p.in_peers(it)) {
          const auto latest = p2p.latest(peer, MODEL_TAG);
          const std::int64_t version = latest ? latest->version : -1;
          p2p.record_neighbour_staleness(it - version);
          got.emplace_back(peer, version);
        }
      } else {
        const auto in = p2p.in_peers(it), out = p2p.out_peers(it);
        if (train != nullptr) train->publish(r, WHOLE, it, out);
        std::vector<CommHandle> exchange;
        for (int peer : in) exchange.push_back(p2p.irecv(peer, MODEL_TAG));
        for (int peer : out) exchange.push_back(p2p.isend(peer, model_bytes, MODEL_TAG, it));
        const auto messages = p2p.wait_all(exchange);
        for (std::size_t i = 0; i < in.size(); ++i) got.emplace_back(in[i], messages[i].version);
      }
      if (train != nullptr) train->mix(r, WHOLE, got);
      rt.iteration_end(it);
      if (train != nullptr) train->iteration_end(r, it, rt.now());
    }
    // The last models still in flight are the runtime's to finish (they belong to no iteration).
  }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_collective = false,
            .synchronous = false};
  }
  [[nodiscard]] std::shared_ptr<const LogicalGraph> logical_graph(int workers, std::uint64_t seed) const override {
    return build_logical_graph(graph_, workers, seed);
  }
  [[nodiscard]] nlohmann::json settings() const override {
    nlohmann::json j{{"graph", graph_.kind},
                     {"variant", asynchronous_ ? "asynchronous" : "synchronous"},
                     {"distinct_neighbours", graph_.distinct_neighbours}};
    if (graph_.kind == "torus2d" && graph_.rows > 0) j["rows"] = graph_.rows;
    return j;
  }

 private:
  GraphSpec graph_;
  bool asynchronous_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "gossip",
                "decentralised SGD: each worker averages its model with its neighbours' in a logical graph "
                "(synchronous D-PSGD or asynchronous AD-PSGD), no server, no global barrier",
                [](ddlsim::ObjectReader& params) {
                  auto graph = ddlsim::models::read_graph_spec(params);
                  const bool async = params.choice("variant", {"synchronous", "asynchronous"}, "synchronous") == "asynchronous";
                  return std::make_unique<ddlsim::models::Gossip>(std::move(graph), async);
                })
