// MG-WFBP bucketing: merge gradients so that the last one's communication ends
// as early as possible (S. Shi, X. Chu, B. Li, "MG-WFBP: Efficient Data
// Communication for Distributed Synchronous SGD Algorithms", IEEE INFOCOM
// 2019; extended in IEEE TPDS 2021, "MG-WFBP: Merging Gradients Wisely").
//
// The model of the paper: gradients become ready in backward order at
// r_1 <= r_2 <= ... <= r_L (the end of each layer's backward); one
// communication stream sends contiguous groups in order; a group of m bytes
// costs t_c(m) = a + b m (a: the startup, here the fixed call cost plus the
// collective's latency terms; b m its transfer time). Merging saves startups
// but delays the earlier gradients; the iteration ends when the last group's
// communication ends. We compute that optimum exactly instead of by the
// paper's greedy pass, with a dynamic program over where the last group starts:
//
//     E(0) = 0,   E(i) = min over j < i of  max(r_i, E(j)) + t_c(m_{j+1} + ... + m_i)
//
// (E(i): the earliest end of communication of gradients 1..i; exact because a
// later end of a prefix never helps). O(L x W) evaluations of t_c, where W =
// min(L, 2048) is how far back a group may start (exact for L <= 2048 layers
// with gradients; docs/scenario.md). Ties keep the fewer, larger groups.
// Layers without gradient bytes join the group that is open when their
// backward runs, as in make_buckets.
#include "models/bucketing.hpp"

#include <algorithm>
#include <limits>

namespace ddlsim::models {

std::vector<Bucket> make_buckets_mgwfbp(const Profile& profile, const std::function<double(double)>& comm_time_s) {
  constexpr std::size_t WINDOW = 2048;
  std::vector<std::size_t> layer;  // backward order, layers with gradients only
  std::vector<double> ready{0};    // ready[i]: gradient i (1-based)
  std::vector<double> prefix{0};   // prefix[i]: bytes of gradients 1..i
  double t = 0;
  for (std::size_t k = profile.layers.size(); k-- > 0;) {
    t += profile.layers[k].backward_s;
    if (profile.layers[k].grad_bytes <= 0) continue;
    layer.push_back(k);
    ready.push_back(t);
    prefix.push_back(prefix.back() + profile.layers[k].grad_bytes);
  }
  const std::size_t n = layer.size();
  if (n == 0) return {};
  std::vector<double> end(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> from(n + 1, 0);
  end[0] = 0;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = i > WINDOW ? i - WINDOW : 0; j < i; ++j) {
      const double e = std::max(ready[i], end[j]) + comm_time_s(prefix[i] - prefix[j]);
      if (e <= end[i]) {  // "<=": among equal ends, the earliest start j (the fewest groups)
        end[i] = e;
        from[i] = j;
      }
    }
  std::vector<std::size_t> starts;  // group boundaries, walked back from the last gradient
  for (std::size_t i = n; i > 0; i = from[i]) starts.push_back(from[i]);
  std::reverse(starts.begin(), starts.end());
  std::vector<Bucket> buckets;
  for (std::size_t g = 0; g < starts.size(); ++g) {
    const std::size_t first = starts[g] + 1;  // 1-based gradient indices of the group
    const std::size_t last = g + 1 < starts.size() ? starts[g + 1] : n;
    const std::size_t top = g == 0 ? profile.layers.size() - 1 : buckets.back().last_layer - 1;
    buckets.push_back(Bucket{std::max(top, layer[first - 1]), layer[last - 1], prefix[last] - prefix[first - 1]});
  }
  return buckets;
}

}  // namespace ddlsim::models
