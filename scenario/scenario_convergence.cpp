// ddlsim: the scenario's "training.convergence" section: co-simulating a real model's training
// (models/convergence/cosimulation.hpp; docs/convergence.md has every key).
#include "scenario/convergence_spec.hpp"
#include "scenario/scenario.hpp"

#include <cmath>
#include <map>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::sim {
namespace {

constexpr const char* PATH = "/training/convergence";
/// The sync models whose numerics are co-simulated (models/convergence/cosimulation.hpp).
constexpr const char* CO_SIMULATED =
    "bsp, local_sgd, asp, ssp, gossip, event_triggered, selective_sync, ordered_gradients";

/// event_triggered's and selective_sync's decisions: "live" needs the co-simulation, and the
/// co-simulation needs "live".
bool live_decisions(const Scenario& s) {
  const auto& name = s.training.sync.name;
  return (name == "event_triggered" || name == "selective_sync" || name == "ordered_gradients") &&
         s.training.sync_model->settings().value("decisions", "") == "live";
}

models::convergence::Rule rule_of(const Scenario& s) {
  models::convergence::Rule rule;
  const auto& name = s.training.sync.name;
  if (name == "bsp") return rule;
  if (name == "local_sgd") {
    const auto settings = s.training.sync_model->settings();
    rule.kind = models::convergence::Rule::Kind::LOCAL_SGD;
    rule.period = settings.at("period_iterations").get<int>();
    rule.warmup = settings.at("warmup_bsp_iterations").get<int>();
    return rule;
  }
  if (name == "asp" || name == "ssp") {
    rule.kind = models::convergence::Rule::Kind::ASYNC;
    return rule;
  }
  if (name == "selective_sync" || name == "ordered_gradients") {
    if (!live_decisions(s))
      throw ConfigError("/training/sync/params/decisions",
                        fmt::format("{} with training.convergence decides from the trained model's own gradients: set "
                                    "\"decisions\": \"live\" (got \"{}\", whose decisions would not be the co-simulated "
                                    "training's)",
                                    name, s.training.sync_model->settings().value("decisions", "")));
    if (name == "selective_sync") {
      rule.kind = models::convergence::Rule::Kind::SELSYNC;
      rule.delta = s.training.sync_model->settings().at("delta").get<double>();
    } else {
      rule.kind = models::convergence::Rule::Kind::ORDERED;
      rule.m = s.training.sync_model->settings().at("m").get<int>();
    }
    return rule;
  }
  if (name == "gossip" || name == "event_triggered") {
    if (name == "event_triggered" && !live_decisions(s))
      throw ConfigError("/training/sync/params/decisions",
                        fmt::format("event_triggered with training.convergence decides from the trained model's own "
                                    "norms: set \"decisions\": \"live\" (got \"{}\", whose decisions would not be "
                                    "the co-simulated training's)",
                                    s.training.sync_model->settings().value("decisions", "")));
    rule.kind = models::convergence::Rule::Kind::PEER;
    return rule;
  }
  throw ConfigError(PATH, fmt::format("training is co-simulated with the sync models {}; \"{}\" is not co-simulated "
                                      "(leave training.convergence out to simulate its time only)",
                                      CO_SIMULATED, excerpt(name)));
}

}  // namespace

std::shared_ptr<const ConvergenceSpec> read_convergence(const json* value, const Scenario& s) {
  if (value == nullptr) {
    if (live_decisions(s))
      throw ConfigError("/training/sync/params/decisions",
                        "\"live\" decides from a co-simulated training's own numerics: add training.convergence "
                        "(docs/convergence.md), or use \"trace\" or \"surrogate\"");
    if (s.training.adaptive.live_gain)
      throw ConfigError("/training/adaptive_compression/gain_model",
                        "\"live\" measures the gain on a co-simulated training's own gradients: add "
                        "training.convergence (docs/convergence.md), or give a gain model (e.g. "
                        "compression_gain/digits_cnn_topk.json)");
    return nullptr;
  }
  ObjectReader r(*value, PATH);
  auto spec = std::make_shared<ConvergenceSpec>();
  auto& c = spec->settings;
  c.dataset = r.choice("dataset", {"fashion_mnist", "digits"}, "fashion_mnist");
  const std::string model = r.choice("model", {"softmax", "mlp"}, "softmax");
  if (model == "mlp") {
    c.hidden_units = static_cast<int>(r.integer("hidden_units", 64, 1, 4096));
  } else if (r.has("hidden_units")) {
    throw ConfigError(r.path_of("hidden_units"), "only with \"model\": \"mlp\" (softmax regression has no hidden layer)");
  }
  c.learning_rate = r.number("learning_rate", 0.1, 1e-9, 100);
  c.shards = r.choice("shards", {"iid", "by_label"}, "iid") == "iid" ? models::convergence::Shards::IID
                                                                    : models::convergence::Shards::BY_LABEL;
  c.target_accuracy = r.number("target_accuracy", 0.8, 1e-6, 1);
  c.evaluate_every_iterations = static_cast<int>(r.integer("evaluate_every_iterations", 1, 1, 1'000'000'000));
  c.train_samples = r.integer("train_samples", 0, 0, 100'000'000);
  c.test_samples = r.integer("test_samples", 0, 0, 100'000'000);
  c.bsp_baseline = r.boolean("bsp_baseline", true);
  c.noise_scale = r.boolean("noise_scale", false);
  r.finish();

  spec->rule = rule_of(s);
  const std::string& compressor = s.training.compressor.name;
  using Kind = models::convergence::Compression::Kind;
  static const std::map<std::string, Kind> KINDS = {
      {"topk", Kind::TOPK}, {"randomk", Kind::RANDOMK}, {"artopk", Kind::ARTOPK}, {"fp16", Kind::FP16},
      {"bf16", Kind::BF16}, {"onebit", Kind::ONEBIT},   {"qsgd", Kind::QSGD},     {"terngrad", Kind::TERNGRAD},
      {"powersgd", Kind::POWERSGD}, {"lwtopk", Kind::LWTOPK}, {"mstopk", Kind::MSTOPK}, {"dgc", Kind::DGC},
      {"threshold", Kind::THRESHOLD}};
  if (const auto kind = KINDS.find(compressor); kind != KINDS.end()) {
    if (spec->rule.kind != models::convergence::Rule::Kind::BSP)
      throw ConfigError("/training/compressor/name",
                        fmt::format("compressor \"{}\" with training.convergence: compressors are co-simulated with "
                                    "bsp only (sync model \"{}\")",
                                    compressor, excerpt(s.training.sync.name)));
    const auto settings = s.training.compressor_model->settings();
    auto& cp = spec->compression;
    cp.kind = kind->second;
    cp.ratio = settings.value(cp.kind == Kind::THRESHOLD ? "density" : "ratio", 1.0);
    cp.error_feedback = settings.value("error_feedback", true);
    cp.levels = settings.value("levels", 127);
    cp.rank = settings.value("rank", 4);
  } else if (compressor != "none") {
    throw ConfigError("/training/compressor/name",
                      fmt::format("compressor \"{}\" with training.convergence: not co-simulated yet (valid: {})",
                                  excerpt(compressor), models::convergence::co_simulated_compressors()));
  }
  if (c.noise_scale && (spec->rule.kind != models::convergence::Rule::Kind::BSP ||
                        spec->compression.kind != models::convergence::Compression::Kind::NONE || s.platform.workers < 2))
    throw ConfigError(r.path_of("noise_scale"),
                      fmt::format("only with bsp, no compressor and at least 2 workers: the noise scale is measured "
                                  "from the workers' gradients of one dense step and their mean (got sync model \"{}\", "
                                  "compressor \"{}\", {} worker{})",
                                  excerpt(s.training.sync.name), excerpt(compressor), s.platform.workers,
                                  s.platform.workers == 1 ? "" : "s"));
  if (s.training.adaptive.enabled && !s.training.adaptive.live_gain)
    throw ConfigError("/training/adaptive_compression/gain_model",
                      "with training.convergence the gain is measured on the trained model's own gradients: set "
                      "\"gain_model\": \"live\" (a fitted gain model is another training's)");
  try {
    spec->data = std::make_shared<const models::convergence::Dataset>(models::convergence::load_dataset(
        c.dataset, static_cast<std::size_t>(c.train_samples), static_cast<std::size_t>(c.test_samples)));
  } catch (const std::exception& e) {
    throw ConfigError(r.path_of("dataset"), e.what());
  }
  const std::size_t shards = static_cast<std::size_t>(s.platform.workers) * (c.shards == models::convergence::Shards::IID ? 1 : 2);
  if (spec->data->train_size() < shards)
    throw ConfigError(r.path_of(c.train_samples > 0 ? "train_samples" : "shards"),
                      fmt::format("{} training samples cannot be dealt to {} workers ({} shards of at least one sample)",
                                  spec->data->train_size(), s.platform.workers, shards));
  if (spec->data->test_size() == 0) throw ConfigError(r.path_of("test_samples"), "the test split is empty");
  // The time side must be the model that is trained: its gradient bytes are the classifier's
  // parameters in the profile's dtype (a ResNet-50 profile's times with a softmax's accuracy would
  // be neither).
  const models::convergence::Classifier classifier(spec->data->features, spec->data->classes, c.hidden_units);
  const int element = s.workload.profile.dtype == "fp32" ? 4 : 2;
  const double expected = static_cast<double>(classifier.parameters()) * element;
  const double given = s.workload.profile.grad_bytes();
  if (std::abs(given - expected) > 0.5)
    throw ConfigError(s.workload.profile_file.empty() ? "/workload/synthetic/grad_bytes" : "/workload/profile",
                      fmt::format("the workload's gradients are {:.0f} bytes, but the co-simulated {} has {} bytes "
                                  "({} parameters in {}): profile the model that is trained (docs/convergence.md, "
                                  "\"Workload\")",
                                  given, classifier.describe(), expected, classifier.parameters(),
                                  s.workload.profile.dtype));
  if (spec->rule.kind == models::convergence::Rule::Kind::SELSYNC || spec->rule.kind == models::convergence::Rule::Kind::ORDERED) {
    // The decisions do not depend on time: the same numerics, run once before the simulation
    // (selective_sync: whether each iteration synchronises; ordered_gradients: who is selected).
    models::convergence::CoSimulation ahead(spec->data, c, spec->rule, s.platform.workers, s.workload.batch_size, s.seed);
    for (int k = 0; k < s.workload.iterations; ++k) {
      const bool synced = ahead.step(k);
      if (spec->rule.kind == models::convergence::Rule::Kind::SELSYNC) spec->decisions.push_back(synced ? 1 : 0);
      else spec->decisions.insert(spec->decisions.end(), ahead.selected().begin(), ahead.selected().end());
    }
  }
  return spec;
}

}  // namespace ddlsim::sim
