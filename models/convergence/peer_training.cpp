// ddlsim: decentralised training's numerics, run live (see peer_training.hpp).
#include "models/convergence/peer_training.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::models::convergence {

PeerTraining::PeerTraining(CoSimulation& sim, int workers, int iterations, std::function<void(const Point&)> on_point)
    : sim_(sim), n_(workers), iterations_(iterations), on_point_(std::move(on_point)),
      tensors_(sim.classifier().tensors()), initial_(sim.initial()) {
  x_.assign(static_cast<std::size_t>(n_), initial_);
  g_.assign(static_cast<std::size_t>(n_), Vector::Zero(initial_.size()));
  sent_.resize(static_cast<std::size_t>(n_) * (tensors_.size() + 1));
}

std::pair<Eigen::Index, Eigen::Index> PeerTraining::range(int t) const {
  if (t == WHOLE) return {0, initial_.size()};
  if (t < 0 || t >= tensors()) throw std::logic_error(fmt::format("co-simulation: no tensor {}", t));
  const auto& tensor = tensors_[static_cast<std::size_t>(t)];
  return {tensor.offset, tensor.size};
}

Eigen::Index PeerTraining::elements(int t) const { return range(t).second; }

std::size_t PeerTraining::slot(int w, int t) const {
  return static_cast<std::size_t>(w) * (tensors_.size() + 1) + static_cast<std::size_t>(t + 1);
}

void PeerTraining::gradient(int w) {
  loss_sum_ += sim_.worker_gradient(w, x_[static_cast<std::size_t>(w)], g_[static_cast<std::size_t>(w)]);
  loss_samples_ += static_cast<double>(sim_.batch());
}

void PeerTraining::step(int w) {
  x_[static_cast<std::size_t>(w)] -= sim_.settings().learning_rate * g_[static_cast<std::size_t>(w)];
}

double PeerTraining::norm(int w, int t) const {
  const auto [at, size] = range(t);
  return x_[static_cast<std::size_t>(w)].segment(at, size).norm();
}

void PeerTraining::publish(int w, int t, std::int64_t version, const std::vector<int>& receivers) {
  const auto [at, size] = range(t);
  auto& kept = sent_[slot(w, t)];
  if (kept.count(version) != 0)
    throw std::logic_error(fmt::format("co-simulation: worker {} sent tensor {} version {} twice", w, t, version));
  kept.emplace(version, Sent{x_[static_cast<std::size_t>(w)].segment(at, size), receivers});
}

void PeerTraining::mix(int w, int t, const std::vector<std::pair<int, std::int64_t>>& got, Unheard unheard) {
  const auto [at, size] = range(t);
  auto mine = x_[static_cast<std::size_t>(w)].segment(at, size);
  Vector sum = mine;
  for (const auto& [peer, version] : got) {
    if (version < 0) {  // nothing from this peer yet: the shared initial model, or zeros
      if (unheard == Unheard::INITIAL) sum += initial_.segment(at, size);
      continue;
    }
    auto& kept = sent_[slot(peer, t)];
    const auto it = kept.find(version);
    if (it == kept.end())
      throw std::logic_error(fmt::format("co-simulation: worker {} read tensor {} version {} of worker {}, which is not kept",
                                         w, t, version, peer));
    sum += it->second.value;
    // Older values are dead to this reader; drop those nobody may read any more.
    for (auto old = kept.begin(); old != it;) {
      auto& readers = old->second.readers;
      readers.erase(std::remove(readers.begin(), readers.end(), w), readers.end());
      old = readers.empty() ? kept.erase(old) : std::next(old);
    }
  }
  mine = sum / static_cast<double>(got.size() + 1);
}

void PeerTraining::iteration_end(int w, int k, double time_s) {
  const bool last = k + 1 == iterations_;
  const int every = sim_.settings().evaluate_every_iterations;
  if (!last && (k + 1) % every != 0) return;
  auto& p = pending_[k];
  if (p.count == 0) p.sum = Vector::Zero(initial_.size());
  p.sum += x_[static_cast<std::size_t>(w)];
  p.time_s = std::max(p.time_s, time_s);
  if (++p.count < n_) return;
  Point point;
  point.iteration = k;
  point.time_s = p.time_s;
  point.epochs = static_cast<double>(k + 1) * n_ * static_cast<double>(sim_.batch()) / static_cast<double>(sim_.train_size());
  point.train_loss = loss_samples_ > 0 ? loss_sum_ / loss_samples_ : 0;
  const auto score = sim_.evaluate(p.sum / static_cast<double>(n_));
  point.test_loss = score.loss;
  point.test_accuracy = score.accuracy;
  loss_sum_ = loss_samples_ = 0;
  pending_.erase(k);
  on_point_(point);
}

std::size_t PeerTraining::kept() const {
  std::size_t out = 0;
  for (const auto& m : sent_) out += m.size();
  return out;
}

}  // namespace ddlsim::models::convergence
