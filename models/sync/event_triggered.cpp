// Event-triggered decentralised SGD (seed 000: EventGraD, Ghosh & Gupta; code at
// github.com/soumyadipghosh/eventgrad, dmnist/event/event.cpp, which this follows).
//
// The workers form a ring (left = r-1, right = r+1 mod N). Each iteration a worker replays its
// I/O, forward and backward; then, for each parameter tensor in order, it tests the event rule
// (models/trigger_rules.hpp: |norm - norm at last send| >= threshold, always during the first
// initial_comm_passes) and on an event puts the tensor one-sidedly to its left and its right
// neighbour (MPI_Put in a passive-target epoch: the receiver takes no part); it averages each
// tensor with the last values its neighbours put (without waiting: the receiver keeps computing
// with the last values it received), then runs its optimizer step. The seed's code completes each
// put before the next (lock, put, unlock per tensor and neighbour): "puts": "sequential", the
// default; "concurrent" starts them together and waits for all, as one access epoch would.
//
// The decisions are training numerics, which a timing simulator cannot invent
// (models/event_decisions.hpp):
//   "decisions": "trace"     replays a recorded training trace (docs/traces.md) as recorded: its
//                            tensors are the messages (numel x dtype bytes); it must have the
//                            platform's workers, at least the workload's iterations, and tensors
//                            adding up to the profile's gradient bytes.
//   "decisions": "surrogate" a seeded schedule fitted from a trace, for models and sizes no trace
//                            exists for: every tensor is sent during the trace's initial passes;
//                            after them, per window of iterations, each message is sent with the
//                            probability the trace's tensor at the same relative depth was (the
//                            largest tensor of the trace layer at that depth). The messages are
//                            the profile's layers (grad_bytes each).
//   "decisions": "live"      with training.convergence: the rule runs on each worker's real
//                            parameters as the co-simulation trains them, and the messages are the
//                            trained model's tensors (numel x dtype bytes); the threshold settings
//                            are the params' ("threshold", "value" or "horizon", "initial_comm_passes",
//                            defaults adaptive, 1, 30). A neighbour not heard from yet adds zeros to
//                            the average: the seed's window is zero-initialised.
// With a trace, the threshold settings are the trace's (a threshold in the params must equal the
// recorded one: another threshold would have produced other numerics, which only a new recording
// can tell).
//
// Events are counted as the paper counts them: one per tensor per neighbour; the always-send
// baseline is 2 x tensors per worker per iteration. Computing norms and averaging are not timed
// (element-wise work the profile does not measure).
#include "models/convergence/peer_training.hpp"
#include "models/event_decisions.hpp"
#include "models/logical_graph.hpp"
#include "models/sync_model.hpp"
#include "models/training_trace.hpp"

#include <fmt/format.h>
#include <optional>
#include <stdexcept>

namespace ddlsim::models {
namespace {

struct ThresholdParams {  // what the scenario gave, to compare with the trace
  std::optional<std::string> threshold;
  std::optional<double> value, horizon;
  std::optional<int> initial_comm_passes;
};

class EventTriggered final : public SyncModel {
 public:
  EventTriggered(DecisionSource source, ThresholdParams given, bool sequential, bool distinct)
      : source_(std::move(source)), given_(std::move(given)), sequential_(sequential), distinct_(distinct) {
    if (!source_.live) return;
    live_.adaptive = given_.threshold.value_or("adaptive") == "adaptive";
    if (live_.adaptive && given_.value)
      throw ConfigError(pointer_append(source_.path, "value"), "only with \"threshold\": \"constant\"");
    if (!live_.adaptive && given_.horizon)
      throw ConfigError(pointer_append(source_.path, "horizon"), "only with \"threshold\": \"adaptive\"");
    if (!live_.adaptive && !given_.value)
      throw ConfigError(pointer_append(source_.path, "value"),
                        "a constant threshold needs its value (norm units, e.g. 0.01)");
    live_.value = given_.value.value_or(0);
    live_.horizon = given_.horizon.value_or(1);
    live_.initial_comm_passes = given_.initial_comm_passes.value_or(30);
  }

  void bind(const SyncBinding& b) override {
    if (b.workers < 2)
      throw ConfigError("/platform/workers", "event_triggered needs at least 2 workers (a ring of neighbours)");
    if (source_.live) return;  // the messages and decisions come from the co-simulated training
    trace_ = load_decision_trace(source_, b, "event_triggered");
    check_threshold(trace_->algorithm.trigger);
    workers_ = b.workers;
    if (source_.surrogate) fit_surrogate(b);
    else replay_trace(b);
  }

  void run_peer_worker(Runtime& rt, PeerComm& p2p, const TrainingPlan& plan) const override {
    const int n = rt.workers();
    const int r = rt.rank();
    const int left = (r + n - 1) % n;
    const int right = (r + 1) % n;
    // Left and right, as the seed's code puts to both windows; at N = 2 they are one worker, which
    // then gets both puts unless distinct_neighbours (docs/scenario.md, "Neighbours on a ring of 2").
    const std::vector<int> peers = distinct_ && left == right ? std::vector<int>{left} : std::vector<int>{left, right};
    // Live decisions (training.convergence): the messages are the trained model's tensors, each
    // worker's rule tested on its real parameter norms (models/convergence/peer_training.hpp).
    convergence::PeerTraining* train = p2p.training();
    if (source_.live && train == nullptr)
      throw std::logic_error("event_triggered: \"decisions\": \"live\" without a co-simulated training");
    std::vector<double> live_bytes;
    std::vector<EventTrigger> triggers;
    if (source_.live) {
      const auto all = static_cast<double>(train->elements(convergence::PeerTraining::WHOLE));
      for (int i = 0; i < train->tensors(); ++i) {
        live_bytes.push_back(plan.profile->grad_bytes() * static_cast<double>(train->elements(i)) / all);
        triggers.emplace_back(live_);
      }
    }
    const auto& bytes = source_.live ? live_bytes : bytes_;
    const auto tensors = static_cast<int>(bytes.size());
    std::vector<CommHandle> puts;
    std::vector<std::pair<int, std::int64_t>> got;
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      replay_compute(rt, plan, false);
      if (train != nullptr) train->gradient(r);
      std::int64_t sent = 0;
      for (int i = 0; i < tensors; ++i) {
        const bool fire = source_.live ? triggers[static_cast<std::size_t>(i)].step(it + 1, train->norm(r, i)) : fires(it, r, i);
        if (!fire) continue;
        if (train != nullptr) train->publish(r, i, it, peers);
        for (int peer : peers) {
          const CommHandle h = p2p.put(peer, bytes[static_cast<std::size_t>(i)], i, it);
          if (sequential_) p2p.wait(h);
          else puts.push_back(h);
          ++sent;
        }
      }
      p2p.wait_all(puts);
      puts.clear();
      // Averaging reads the newest values each neighbour put of every tensor: their age.
      for (int i = 0; i < tensors; ++i) {
        got.clear();
        for (int peer : peers) {
          const auto latest = p2p.latest(peer, i);
          const std::int64_t version = latest ? latest->version : -1;
          p2p.record_neighbour_staleness(it - version);
          got.emplace_back(peer, version);
        }
        // The seed's window starts zeroed: a neighbour not heard from yet adds zeros.
        if (train != nullptr) train->mix(r, i, got, convergence::PeerTraining::Unheard::ZERO);
      }
      rt.record_events(sent, static_cast<std::int64_t>(peers.size()) * tensors);
      if (plan.profile->optimizer_s > 0) rt.compute(plan.profile->optimizer_s, Phase::OPTIMIZER, "optimizer");
      if (train != nullptr) train->step(r);
      rt.iteration_end(it);
      if (train != nullptr) train->iteration_end(r, it, rt.now());
    }
  }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_collective = false,
            .synchronous = false};
  }
  [[nodiscard]] std::shared_ptr<const LogicalGraph> logical_graph(int workers, std::uint64_t seed) const override {
    GraphSpec ring;
    ring.distinct_neighbours = distinct_;
    return workers >= 2 ? build_logical_graph(ring, workers, seed) : nullptr;
  }
  [[nodiscard]] std::string events_unit() const override { return "tensor put to one neighbour"; }
  [[nodiscard]] nlohmann::json settings() const override {
    nlohmann::json j{{"graph", "ring"},
                     {"puts", sequential_ ? "sequential" : "concurrent"},
                     {"decisions", source_.live ? "live" : source_.surrogate ? "surrogate" : "trace"},
                     {"distinct_neighbours", distinct_}};
    if (trace_ || source_.live) {
      const auto& t = source_.live ? live_ : trace_->algorithm.trigger;
      j["threshold"] = t.adaptive ? "adaptive" : "constant";
      j[t.adaptive ? "horizon" : "value"] = t.adaptive ? t.horizon : t.value;
      j["initial_comm_passes"] = t.initial_comm_passes;
    }
    return j;
  }
  [[nodiscard]] nlohmann::json decisions() const override {
    if (source_.live)
      return {{"source", "live"},
              {"messages", "the co-simulated model's parameter tensors (training.convergence)"},
              {"rule", "|norm - norm at last send| >= threshold on each worker's real parameters (seed 000)"}};
    auto j = describe_source(source_, trace_.get());
    j["messages_per_iteration_baseline"] = 2 * bytes_.size();
    if (source_.surrogate) j["surrogate_messages"] = "the profile's layers (grad_bytes each)";
    return j;
  }

 private:
  /// Whether worker `w` sends message `i` in iteration `k`: replayed, or drawn when asked (nothing stored).
  [[nodiscard]] bool fires(int k, int w, int i) const {
    if (!source_.surrogate) return fires_[index(k, w, i)] != 0;
    const double p = rates_.rate(source_tensor_[static_cast<std::size_t>(i)], k);
    return p >= 1 || surrogate_uniform(seed_, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(w),
                                       static_cast<std::uint64_t>(i)) < p;
  }

  [[nodiscard]] std::size_t index(int k, int w, int i) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(workers_) + static_cast<std::size_t>(w)) * bytes_.size() +
           static_cast<std::size_t>(i);
  }

  void check_threshold(const EventTriggerSettings& recorded) const {
    const auto refuse = [&](const std::string& key, const std::string& given, const std::string& got) {
      throw ConfigError(pointer_append(source_.path, key),
                        fmt::format("{} here, but the training trace \"{}\" was recorded with {}; other settings give "
                                    "other numerics: record a trace with them (tools/record_training.py) or leave "
                                    "\"{}\" out",
                                    given, source_.trace_file, got, key));
    };
    const std::string kind = recorded.adaptive ? "adaptive" : "constant";
    if (given_.threshold && *given_.threshold != kind) refuse("threshold", *given_.threshold, kind);
    if (given_.value && (recorded.adaptive || *given_.value != recorded.value))
      refuse("value", fmt::format("{}", *given_.value), recorded.adaptive ? "an adaptive threshold" : fmt::format("value {}", recorded.value));
    if (given_.horizon && (!recorded.adaptive || *given_.horizon != recorded.horizon))
      refuse("horizon", fmt::format("{}", *given_.horizon), !recorded.adaptive ? "a constant threshold" : fmt::format("horizon {}", recorded.horizon));
    if (given_.initial_comm_passes && *given_.initial_comm_passes != recorded.initial_comm_passes)
      refuse("initial_comm_passes", fmt::format("{}", *given_.initial_comm_passes),
             fmt::format("initial_comm_passes {}", recorded.initial_comm_passes));
  }

  void replay_trace(const SyncBinding& b) {
    const auto& t = *trace_;
    check_trace_bytes(t, b, source_);
    for (int i = 0; i < t.tensor_count(); ++i) bytes_.push_back(t.tensor_bytes(i));
    fires_.resize(static_cast<std::size_t>(b.iterations) * static_cast<std::size_t>(b.workers) * bytes_.size());
    for (int k = 0; k < b.iterations; ++k)
      for (int w = 0; w < b.workers; ++w)
        for (int i = 0; i < t.tensor_count(); ++i) fires_[index(k, w, i)] = t.sent(k, w, i) ? 1 : 0;
  }

  void fit_surrogate(const SyncBinding& b) {
    rates_ = fit_tensor_rates(*trace_, source_);
    seed_ = b.seed;
    for (const auto& layer : b.profile->layers)  // the profile's layers with gradients are the messages
      if (layer.grad_bytes > 0) bytes_.push_back(layer.grad_bytes);
    for (std::size_t j = 0; j < bytes_.size(); ++j)
      source_tensor_.push_back(rates_.tensor_at_depth((static_cast<double>(j) + 0.5) / static_cast<double>(bytes_.size())));
  }

  DecisionSource source_;
  ThresholdParams given_;
  EventTriggerSettings live_;  // "decisions": "live": the rule's settings as given
  bool sequential_;
  bool distinct_;  // one put per distinct neighbour (a ring of 2: one, not left and right)
  std::shared_ptr<const TrainingTrace> trace_;
  int workers_ = 0;
  std::vector<double> bytes_;  // per message (tensor or layer)
  std::vector<char> fires_;    // iteration x worker x message (replayed from a trace)
  TensorRates rates_;               // the surrogate: fitted rates, the traced tensor behind each
  std::vector<int> source_tensor_;  // message, and the scenario's seed
  std::uint64_t seed_ = 0;
};

/// The trace rule of EventGraD: each tensor is put to the neighbours when its parameter norm moved by
/// the threshold (models/trigger_rules.hpp: EventTrigger), per worker and tensor.
class EventTriggerRule final : public TraceRule {
 public:
  explicit EventTriggerRule(EventTriggerSettings s) : s_(s) {}
  void describe(TraceAlgorithm& a) const override { a.trigger = s_; }
  void check(const TrainingTrace& t, const std::string&, const TraceMismatch& mismatch) const override {
    for (int w = 0; w < t.workers; ++w)
      for (int i = 0; i < t.tensor_count(); ++i) {
        EventTrigger trig(s_);
        for (int k = 0; k < t.iterations; ++k)
          if (const bool fire = trig.step(k + 1, t.param_norm(k, w, i)); fire != t.sent(k, w, i)) mismatch(k, w, i, fire);
      }
  }

 private:
  EventTriggerSettings s_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "event_triggered",
                "EventGraD: decentralised SGD on a ring where a worker puts a parameter tensor to its neighbours only "
                "when its norm moved by a threshold; decisions replayed from a training trace or a fitted surrogate",
                [](ddlsim::ObjectReader& params) {
                  auto source = ddlsim::models::read_decision_source(params, true, true);
                  ddlsim::models::ThresholdParams given;
                  if (params.has("threshold")) given.threshold = params.choice("threshold", {"constant", "adaptive"}, "adaptive");
                  if (params.has("value")) given.value = params.number("value", 0, 0, 1e30);
                  if (params.has("horizon")) given.horizon = params.number("horizon", 1, 0, 1e6);
                  if (params.has("initial_comm_passes"))
                    given.initial_comm_passes = static_cast<int>(params.integer("initial_comm_passes", 30, 0, 1'000'000'000));
                  const bool sequential = params.choice("puts", {"sequential", "concurrent"}, "sequential") == "sequential";
                  const bool distinct = params.boolean("distinct_neighbours", false);
                  return std::make_unique<ddlsim::models::EventTriggered>(std::move(source), std::move(given), sequential,
                                                                          distinct);
                })

DDLSIM_REGISTER(ddlsim::models::TraceRule, "event_triggered", "EventGraD's threshold rule on each tensor's parameter norm (models/trigger_rules.hpp)",
                [](ddlsim::ObjectReader& a) {
                  (void)a.require("name");
                  ddlsim::models::EventTriggerSettings s;
                  s.adaptive = a.choice("threshold", {"constant", "adaptive"}, "adaptive") == "adaptive";
                  if (s.adaptive) s.horizon = a.number("horizon", 1, 0, 1e6);
                  else s.value = a.number("value", 0, 0, 1e30);
                  s.initial_comm_passes = static_cast<int>(a.integer("initial_comm_passes", 30, 0, 1'000'000'000));
                  return std::make_unique<ddlsim::models::EventTriggerRule>(s);
                })
