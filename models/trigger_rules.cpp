#include "models/trigger_rules.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ddlsim::models {

bool EventTrigger::step(int pass, double norm) {
  // The order of the seed's code: the threshold is updated first, then tested.
  thres_ = s_.adaptive ? thres_ * s_.horizon : s_.value;
  const double diff = std::fabs(norm - last_sent_norm_);
  const double passes = pass - last_sent_pass_;
  if (!(diff >= thres_ || pass < s_.initial_comm_passes)) return false;
  slopes_[0] = slopes_[1];
  slopes_[1] = diff / passes;
  if (s_.adaptive) thres_ = ((0.0 + slopes_[0]) + slopes_[1]) / 2;
  last_sent_norm_ = norm;
  last_sent_pass_ = pass;
  return true;
}

double total_norm(const double* norms, std::size_t count) {
  double sum = 0;
  for (std::size_t i = 0; i < count; ++i) sum += norms[i] * norms[i];
  return std::sqrt(sum);
}

std::vector<char> ordered_selection(const std::vector<double>& norms, int m) {
  std::vector<int> ranks(norms.size());
  std::iota(ranks.begin(), ranks.end(), 0);
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return norms[static_cast<std::size_t>(a)] > norms[static_cast<std::size_t>(b)]; });
  std::vector<char> selected(norms.size(), 0);
  for (int i = 0; i < m && i < static_cast<int>(ranks.size()); ++i) selected[static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)])] = 1;
  return selected;
}

bool SelSyncTrigger::step(double total_grad_norm) {
  const double previous = previous_;
  previous_ = total_grad_norm;
  if (previous < 0) return true;
  return std::fabs(total_grad_norm - previous) / previous >= delta_;
}

}  // namespace ddlsim::models
