// ddlsim: training numerics inside the simulation (see cosimulation.hpp).
#include "models/convergence/cosimulation.hpp"

#include "models/convergence/random.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <fmt/format.h>

namespace ddlsim::models::convergence {
namespace {

/// Rows per forward/backward pass over a union batch: bounds the memory of large N b.
constexpr std::size_t CHUNK_ROWS = 4096;

}  // namespace

std::vector<std::vector<std::uint32_t>> make_shards(const std::vector<std::uint8_t>& labels, int workers, Shards kind,
                                                    std::uint64_t seed) {
  const std::size_t n = labels.size(), w = static_cast<std::size_t>(workers);
  const std::size_t pieces = kind == Shards::IID ? w : 2 * w;
  if (workers < 1 || n < pieces)
    throw std::invalid_argument(fmt::format("{} training samples cannot be dealt in {} shards", n, pieces));
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0U);
  Rng rng(stream(seed, 1, 0));
  if (kind == Shards::IID) {
    shuffle(order, rng);
  } else {  // sorted by label, ties in file order
    std::stable_sort(order.begin(), order.end(), [&labels](std::uint32_t a, std::uint32_t b) { return labels[a] < labels[b]; });
  }
  std::vector<std::size_t> piece_of(pieces);  // which piece each shard slot takes
  std::iota(piece_of.begin(), piece_of.end(), std::size_t{0});
  if (kind == Shards::BY_LABEL) shuffle(piece_of, rng);
  std::vector<std::vector<std::uint32_t>> shards(w);
  for (std::size_t slot = 0; slot < pieces; ++slot) {
    const std::size_t p = piece_of[slot];
    const std::size_t lo = p * n / pieces, hi = (p + 1) * n / pieces;
    auto& shard = shards[slot % w];
    shard.insert(shard.end(), order.begin() + static_cast<std::ptrdiff_t>(lo), order.begin() + static_cast<std::ptrdiff_t>(hi));
  }
  return shards;
}

CoSimulation::CoSimulation(std::shared_ptr<const Dataset> data, const Settings& settings, Rule rule, int workers,
                           std::int64_t batch_per_worker, std::uint64_t seed, Compression compression)
    : data_(std::move(data)), settings_(settings), rule_(rule), n_(workers), batch_(batch_per_worker), seed_(seed),
      model_(data_->features, data_->classes, settings.hidden_units) {
  if (compression.kind != Compression::Kind::NONE && rule.kind != Rule::Kind::BSP)
    throw std::invalid_argument("a compressor is co-simulated with bsp only");
  if (compression.kind != Compression::Kind::NONE) {
    compression.layers.clear();
    for (const auto& t : model_.tensors()) compression.layers.emplace_back(t.offset, t.size);
    compression_.emplace(std::move(compression), model_.parameters(), workers, seed);
  }
  shards_ = make_shards(data_->train_y, workers, settings.shards, seed);
  cursors_.resize(shards_.size());
  const bool copies = rule.kind == Rule::Kind::LOCAL_SGD || rule.kind == Rule::Kind::SELSYNC;
  workers_theta_.assign(copies ? static_cast<std::size_t>(workers) : 1, model_.initial(seed));
  if (rule.kind == Rule::Kind::SELSYNC) triggers_.assign(static_cast<std::size_t>(workers), SelSyncTrigger(rule.delta));
  std::vector<std::uint32_t> all(data_->test_size());
  std::iota(all.begin(), all.end(), 0U);
  test_x_ = rows(all, data_->test_x);
}

void CoSimulation::set_compression_ratio(double ratio) {
  if (!compression_) throw std::logic_error("a compression ratio without a compressor");
  compression_->set_ratio(ratio);
}

Matrix CoSimulation::rows(const std::vector<std::uint32_t>& idx, const std::vector<float>& x) const {
  const auto f = static_cast<std::size_t>(data_->features);
  Matrix m(static_cast<Eigen::Index>(idx.size()), data_->features);
  for (std::size_t i = 0; i < idx.size(); ++i)
    for (std::size_t j = 0; j < f; ++j) m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = x[idx[i] * f + j];
  return m;
}

std::vector<std::uint32_t> CoSimulation::next_batch(int w) {
  auto& c = cursors_[static_cast<std::size_t>(w)];
  const auto& shard = shards_[static_cast<std::size_t>(w)];
  std::vector<std::uint32_t> out;
  out.reserve(static_cast<std::size_t>(batch_));
  while (out.size() < static_cast<std::size_t>(batch_)) {
    if (c.at == c.order.size()) {  // a new epoch of this shard: a fresh permutation
      c.order = shard;
      Rng rng(stream(seed_, 2, static_cast<std::uint64_t>(w) << 24 ^ static_cast<std::uint64_t>(c.epoch)));
      shuffle(c.order, rng);
      c.at = 0;
      ++c.epoch;
    }
    out.push_back(c.order[c.at++]);
  }
  return out;
}

void CoSimulation::step_union() {
  std::vector<std::uint32_t> all;
  all.reserve(static_cast<std::size_t>(batch_) * static_cast<std::size_t>(n_));
  for (int w = 0; w < n_; ++w) {
    const auto b = next_batch(w);
    all.insert(all.end(), b.begin(), b.end());
  }
  Vector& theta = workers_theta_.front();
  Vector grad = Vector::Zero(theta.size());
  std::vector<std::uint8_t> y(CHUNK_ROWS);
  for (std::size_t lo = 0; lo < all.size(); lo += CHUNK_ROWS) {
    const std::size_t hi = std::min(all.size(), lo + CHUNK_ROWS);
    const std::vector<std::uint32_t> part(all.begin() + static_cast<std::ptrdiff_t>(lo), all.begin() + static_cast<std::ptrdiff_t>(hi));
    for (std::size_t i = 0; i < part.size(); ++i) y[i] = data_->train_y[part[i]];
    loss_sum_ += model_.accumulate(theta, rows(part, data_->train_x), y.data(), grad);
  }
  const auto total = static_cast<double>(all.size());
  theta -= (settings_.learning_rate / total) * grad;
  loss_samples_ += total;
  samples_ += total;
}

void CoSimulation::step_measured() {
  Vector& theta = workers_theta_.front();
  Vector sum = Vector::Zero(theta.size()), g;
  double small = 0;  // mean over workers of |G_b|^2
  for (int w = 0; w < n_; ++w) {
    loss_sum_ += worker_gradient(w, theta, g);
    small += g.squaredNorm() / n_;
    sum += g;
  }
  const double b = static_cast<double>(batch_), big_b = b * n_;
  const Vector mean = sum / static_cast<double>(n_);  // the union batch's mean gradient
  const double big = mean.squaredNorm();
  // McCandlish et al. 2018, A.1: unbiased estimates from the two batch sizes b and N b.
  noise_norm_sum_ += (big_b * big - b * small) / (big_b - b);
  noise_trace_sum_ += (small - big) / (1.0 / b - 1.0 / big_b);
  theta -= settings_.learning_rate * mean;
  loss_samples_ += big_b;
  samples_ += big_b;
}

void CoSimulation::step_compressed(int k) {
  Vector& theta = workers_theta_.front();
  std::vector<Vector> gradients(static_cast<std::size_t>(n_));
  for (int w = 0; w < n_; ++w) {
    loss_sum_ += worker_gradient(w, theta, gradients[static_cast<std::size_t>(w)]);
    loss_samples_ += static_cast<double>(batch_);
    samples_ += static_cast<double>(batch_);
  }
  theta -= settings_.learning_rate * compression_->aggregate(k, gradients);
}

void CoSimulation::step_local() {
  for (int w = 0; w < n_; ++w) {
    const auto b = next_batch(w);
    std::vector<std::uint8_t> y(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) y[i] = data_->train_y[b[i]];
    Vector& theta = workers_theta_[static_cast<std::size_t>(w)];
    Vector grad = Vector::Zero(theta.size());
    loss_sum_ += model_.accumulate(theta, rows(b, data_->train_x), y.data(), grad);
    if (!triggers_.empty() && triggers_[static_cast<std::size_t>(w)].step(grad.norm() / static_cast<double>(b.size())))
      flagged_ = true;  // its mean gradient's norm changed by delta or more
    theta -= (settings_.learning_rate / static_cast<double>(b.size())) * grad;
    loss_samples_ += static_cast<double>(b.size());
    samples_ += static_cast<double>(b.size());
  }
}

double CoSimulation::worker_gradient(int w, const Vector& theta, Vector& grad) {
  const auto b = next_batch(w);
  std::vector<std::uint8_t> y(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) y[i] = data_->train_y[b[i]];
  grad = Vector::Zero(theta.size());
  const double loss = model_.accumulate(theta, rows(b, data_->train_x), y.data(), grad);
  grad /= static_cast<double>(b.size());
  return loss;
}

Classifier::Score CoSimulation::evaluate(const Vector& theta) const {
  return model_.evaluate(theta, test_x_, data_->test_y.data());
}

void CoSimulation::average() {
  Vector mean = Vector::Zero(workers_theta_.front().size());
  for (const auto& t : workers_theta_) mean += t;
  mean /= static_cast<double>(workers_theta_.size());
  for (auto& t : workers_theta_) t = mean;
}

void CoSimulation::step_ordered() {
  Vector& theta = workers_theta_.front();
  std::vector<Vector> g(static_cast<std::size_t>(n_));
  std::vector<double> norms(static_cast<std::size_t>(n_));
  for (int w = 0; w < n_; ++w) {
    loss_sum_ += worker_gradient(w, theta, g[static_cast<std::size_t>(w)]);
    norms[static_cast<std::size_t>(w)] = g[static_cast<std::size_t>(w)].norm();
  }
  selected_ = ordered_selection(norms, rule_.m);
  Vector mean = Vector::Zero(theta.size());
  for (int w = 0; w < n_; ++w)
    if (selected_[static_cast<std::size_t>(w)] != 0) mean += g[static_cast<std::size_t>(w)];
  theta -= (settings_.learning_rate / rule_.m) * mean;
  const double samples = static_cast<double>(batch_) * n_;  // every worker computed its batch
  loss_samples_ += samples;
  samples_ += samples;
}

bool CoSimulation::step(int k) {
  if (rule_.kind == Rule::Kind::ORDERED) {
    step_ordered();
    return true;
  }
  if (rule_.kind == Rule::Kind::BSP) {
    if (compression_) step_compressed(k);
    else if (settings_.noise_scale) step_measured();
    else step_union();
    return true;
  }
  if (rule_.kind == Rule::Kind::SELSYNC) {
    flagged_ = false;
    step_local();
    if (flagged_) average();
    return flagged_;
  }
  if (k < rule_.warmup) {  // local SGD's warm-up: bsp on the (identical) copies
    workers_theta_.resize(1);
    step_union();
    const Vector theta = workers_theta_.front();
    workers_theta_.assign(static_cast<std::size_t>(n_), theta);
    return true;
  }
  step_local();
  if (rule_.synchronised_after(k)) average();
  return rule_.synchronised_after(k);
}

struct CoSimulation::Snapshot {
  std::vector<Vector> theta;
  std::vector<Cursor> cursors;
  std::optional<GradientCompression> compression;
  double loss_sum = 0, loss_samples = 0, samples = 0;
  int since_eval = 0;
};

std::shared_ptr<const CoSimulation::Snapshot> CoSimulation::snapshot() const {
  return std::make_shared<const Snapshot>(
      Snapshot{workers_theta_, cursors_, compression_, loss_sum_, loss_samples_, samples_, since_eval_});
}

void CoSimulation::restore(const Snapshot& s) {
  workers_theta_ = s.theta;
  cursors_ = s.cursors;
  compression_ = s.compression;
  loss_sum_ = s.loss_sum;
  loss_samples_ = s.loss_samples;
  samples_ = s.samples;
  since_eval_ = s.since_eval;
}

void CoSimulation::clear_compression_memory() {
  if (compression_) compression_->clear_residuals();
}

Point CoSimulation::evaluate_now(int k, double end_s) {
  Point p;
  p.iteration = k;
  p.time_s = end_s;
  p.epochs = samples_ / static_cast<double>(data_->train_size());
  p.train_loss = loss_samples_ > 0 ? loss_sum_ / loss_samples_ : 0;
  const auto score = model_.evaluate(workers_theta_.front(), test_x_, data_->test_y.data());
  p.test_loss = score.loss;
  p.test_accuracy = score.accuracy;
  if (settings_.noise_scale && noise_norm_sum_ > 0) p.gradient_noise_scale = noise_trace_sum_ / noise_norm_sum_;
  loss_sum_ = loss_samples_ = 0;
  noise_trace_sum_ = noise_norm_sum_ = 0;
  since_eval_ = 0;
  return p;
}

std::optional<Point> CoSimulation::iteration(int k, double end_s, bool last) {
  // asp, ssp: replayed from the servers' updates (async_replay.hpp); gossip, event_triggered: run
  // by the worker loops (peer_training.hpp).
  if (rule_.kind == Rule::Kind::ASYNC || rule_.kind == Rule::Kind::PEER) return std::nullopt;
  const bool synchronised = step(k);
  ++since_eval_;
  if (!synchronised) return std::nullopt;
  if (!last && since_eval_ < settings_.evaluate_every_iterations) return std::nullopt;
  return evaluate_now(k, end_s);
}

}  // namespace ddlsim::models::convergence
