#include "models/training_trace.hpp"

#include "models/error.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::models {
namespace {

constexpr double MAX_NORM = 1e30;

TraceAlgorithm read_algorithm(ObjectReader& a) {
  TraceAlgorithm out;
  out.settings = a.raw();
  (void)a.require("name");
  auto& rules = TraceRuleRegistry::instance();
  out.name = a.choice("name", rules.names(), "");
  // The rule reads its settings beside "name" (and "name" itself, so that the valid keys list it).
  out.rule = rules.create(out.name, a.raw(), a.path_of("name"), a.path(), "trace algorithm");
  out.rule->describe(out);
  return out;
}

/// "none": every gradient averaged every iteration.
class EveryGradientRule final : public TraceRule {
 public:
  void describe(TraceAlgorithm&) const override {}
  void check(const TrainingTrace& t, const std::string&, const TraceMismatch& mismatch) const override {
    for (int k = 0; k < t.iterations; ++k)
      for (int w = 0; w < t.workers; ++w)
        for (int i = 0; i < t.tensor_count(); ++i)
          if (!t.sent(k, w, i)) mismatch(k, w, i, true);
  }
};

/// Reads a K x N x T array of numbers (or 0/1 flags) into `out`, row-major.
template <typename T>
void read_cube(const json& value, const std::string& path, int k, int n, int t, bool flags, std::vector<T>& out) {
  const auto expect_array = [](const json& v, const std::string& p, int size, const char* what) {
    if (!v.is_array() || static_cast<int>(v.size()) != size)
      throw ConfigError(p, fmt::format("expected an array of {} {}, got {}", size, what,
                                       v.is_array() ? fmt::format("{} entries", v.size()) : json_type_name(v)));
  };
  expect_array(value, path, k, "iterations");
  out.reserve(static_cast<std::size_t>(k) * static_cast<std::size_t>(n) * static_cast<std::size_t>(t));
  for (int a = 0; a < k; ++a) {
    const json& per_worker = value[static_cast<std::size_t>(a)];
    const std::string pa = fmt::format("{}/{}", path, a);
    expect_array(per_worker, pa, n, "workers");
    for (int b = 0; b < n; ++b) {
      const json& per_tensor = per_worker[static_cast<std::size_t>(b)];
      const std::string pb = fmt::format("{}/{}", pa, b);
      expect_array(per_tensor, pb, t, "tensors");
      for (int c = 0; c < t; ++c) {
        const std::string pc = fmt::format("{}/{}", pb, c);
        const json& v = per_tensor[static_cast<std::size_t>(c)];
        if (flags) out.push_back(static_cast<T>(checked_integer(v, pc, 0, 1)));
        else out.push_back(static_cast<T>(checked_number(v, pc, 0, MAX_NORM)));
      }
    }
  }
}

}  // namespace

TrainingTrace TrainingTrace::read(const json& doc, const std::string& path) {
  ObjectReader root(doc, path);
  TrainingTrace t;
  if (root.required_string("format") != "ddlsim-training-trace")
    throw ConfigError(root.path_of("format"), fmt::format("expected \"ddlsim-training-trace\", got {}", root.raw()["format"].dump()));
  if (root.required_integer("version", 1, 1) != 1) throw ConfigError(root.path_of("version"), "expected 1");
  t.model = root.required_string("model");
  t.workers = static_cast<int>(root.required_integer("workers", 1, 1'000'000));
  t.iterations = static_cast<int>(root.required_integer("iterations", 1, 100'000'000));
  t.batch_size = root.required_integer("batch_size", 1, std::numeric_limits<std::int32_t>::max());
  t.dtype_bytes = static_cast<int>(root.integer("dtype_bytes", 4, 1, 16));
  {
    (void)root.require("algorithm");
    ObjectReader a = root.object("algorithm");
    t.algorithm = read_algorithm(a);
  }
  const json& tensors = root.require("tensors");
  const std::string tp = root.path_of("tensors");
  if (!tensors.is_array() || tensors.empty())
    throw ConfigError(tp, fmt::format("expected a non-empty array of tensors, got {}", json_type_name(tensors)));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    ObjectReader r(tensors[i], fmt::format("{}/{}", tp, i));
    TraceTensor tt;
    tt.name = r.required_string("name");
    tt.numel = r.required_integer("numel", 1, std::int64_t{1} << 40);
    if (const json* shape = r.find("shape")) {
      if (!shape->is_array()) throw ConfigError(r.path_of("shape"), fmt::format("expected an array, got {}", json_type_name(*shape)));
      std::int64_t product = 1;
      for (std::size_t d = 0; d < shape->size(); ++d)
        product *= checked_integer((*shape)[d], fmt::format("{}/{}", r.path_of("shape"), d), 1, std::int64_t{1} << 40);
      if (product != tt.numel)
        throw ConfigError(r.path_of("numel"), fmt::format("{} is not the product of the shape, {}", tt.numel, product));
    }
    r.finish();
    t.tensors.push_back(std::move(tt));
  }
  const int T = t.tensor_count();
  read_cube(root.require("param_norm"), root.path_of("param_norm"), t.iterations, t.workers, T, false, t.param_norm_);
  read_cube(root.require("grad_norm"), root.path_of("grad_norm"), t.iterations, t.workers, T, false, t.grad_norm_);
  read_cube(root.require("sent"), root.path_of("sent"), t.iterations, t.workers, T, true, t.sent_);
  const json& epochs = root.require("epochs");
  const std::string ep = root.path_of("epochs");
  if (!epochs.is_array()) throw ConfigError(ep, fmt::format("expected an array, got {}", json_type_name(epochs)));
  for (std::size_t i = 0; i < epochs.size(); ++i) {
    ObjectReader r(epochs[i], fmt::format("{}/{}", ep, i));
    TraceEpoch e;
    e.epoch = static_cast<int>(r.required_integer("epoch", 1, 100'000'000));
    e.last_iteration = static_cast<int>(r.required_integer("last_iteration", 0, t.iterations - 1));
    e.train_loss = r.number("train_loss", 0, 0, MAX_NORM);
    e.train_accuracy = r.number("train_accuracy", 0, 0, 1);
    e.test_loss = r.number("test_loss", 0, 0, MAX_NORM);
    e.test_accuracy = r.number("test_accuracy", 0, 0, 1);
    r.finish();
    if (!t.epochs.empty() && e.last_iteration <= t.epochs.back().last_iteration)
      throw ConfigError(r.path_of("last_iteration"), fmt::format("epochs must end at increasing iterations: {} after {}",
                                                                 e.last_iteration, t.epochs.back().last_iteration));
    t.epochs.push_back(e);
  }
  if (const json* p = root.find("provenance")) {
    if (!p->is_object()) throw ConfigError(root.path_of("provenance"), fmt::format("expected an object, got {}", json_type_name(*p)));
    t.provenance = *p;
  }
  root.finish();
  t.check_rule(path);
  return t;
}

TrainingTrace TrainingTrace::load(const std::string& file, const std::string& ref_path) {
  return load_referenced(file, "training trace", ref_path, [](const json& doc) { return read(doc, ""); });
}

double TrainingTrace::model_bytes() const {
  double sum = 0;
  for (int i = 0; i < tensor_count(); ++i) sum += tensor_bytes(i);
  return sum;
}

double TrainingTrace::total_grad_norm(int k, int w) const {
  return total_norm(&grad_norm_[index(k, w, 0)], tensors.size());
}

void TrainingTrace::check_rule(const std::string& path) const {
  const auto mismatch = [&](int k, int w, int i, bool rule) {
    throw ConfigError(fmt::format("{}/sent/{}/{}/{}", path, k, w, i),
                      fmt::format("the {} rule with the recorded settings gives {} here (iteration {}, worker {}, tensor "
                                  "\"{}\"), the trace records {}; the trace's decisions do not follow its algorithm",
                                  algorithm.name, rule ? 1 : 0, k, w, tensors[static_cast<std::size_t>(i)].name, rule ? 0 : 1));
  };
  algorithm.rule->check(*this, path, mismatch);
}

json TrainingTrace::describe() const {
  json j{{"model", model}, {"workers", workers}, {"iterations", iterations}, {"batch_size", batch_size},
         {"algorithm", algorithm.settings}, {"tensors", tensors.size()}, {"provenance", provenance}};
  if (!epochs.empty()) {
    const auto& e = epochs.back();
    j["final_epoch"] = {{"epoch", e.epoch}, {"train_loss", e.train_loss}, {"train_accuracy", e.train_accuracy},
                        {"test_loss", e.test_loss}, {"test_accuracy", e.test_accuracy}};
  }
  return j;
}

}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::TraceRule, "none", "every gradient averaged every iteration",
                [](ddlsim::ObjectReader& a) {
                  (void)a.require("name");
                  return std::make_unique<ddlsim::models::EveryGradientRule>();
                })
