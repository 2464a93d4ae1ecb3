// Torus: a 2-D or 3-D wrap-around mesh of hosts, no switches.
//
// With dims d0 x d1 (x d2), host slot s (workers 0..N-1, then servers
// 0..S-1) sits at coordinates (s mod d0, (s / d0) mod d1, s / (d0 d1)): the
// first dimension varies fastest. Each host links to its +1 neighbour (mod
// size) in every dimension with one platform link. A dimension of size 1
// adds no link and one of size 2 a single link per pair, so there are never
// parallel links (4 x 4: 32 links, degree 4, host diameter 4).
//
// Parameters:
//   "dims"  array of 2 or 3 positive integers whose product is
//           workers + parameter_servers; default: the most square 2-D
//           factorisation a x b, a <= b, a the largest divisor <= sqrt(H).
//
// Reference: the 3-D torus of the IBM Blue Gene/L, Adiga et al., "Blue
// Gene/L torus interconnection network", IBM J. Res. & Dev. 49(2/3), 2005;
// TPU v4 pods use the same wrap-around links (Jouppi et al., ISCA 2023).
#include "platforms/topology.hpp"

#include <cmath>
#include <fmt/ranges.h>

namespace ddlsim::platforms {
namespace {

class TorusBuilder final : public TopologyBuilder {
 public:
  explicit TorusBuilder(std::vector<int> dims) : dims_(std::move(dims)) {}

  [[nodiscard]] Topology build(const BuildRequest& request) const override {
    const int n = host_count(request);
    std::vector<int> dims = dims_.empty() ? square_dims(n) : dims_;
    long long product = 1;
    for (int d : dims) product *= d;
    if (product != n)
      throw ConfigError(request.params_path + "/dims",
                        fmt::format("the product of dims [{}] is {}, but the platform has {}", fmt::join(dims, ", "),
                                    product, describe_hosts(request)));

    Topology topo;
    topo.kind = "torus";
    auto hosts = add_hosts(topo, request);
    for (int s = 0; s < n; ++s) {
      int stride = 1;
      for (int size : dims) {
        const int coord = (s / stride) % size;
        if (size > 2 || (size == 2 && coord == 0)) {
          const int neighbour = s + ((coord + 1) % size - coord) * stride;
          add_link(topo, hosts[s], hosts[neighbour], request.link);
        }
        stride *= size;
      }
    }
    return topo;
  }

 private:
  static std::vector<int> square_dims(int n) {
    int a = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n))));
    while (a > 1 && (a * a > n || n % a != 0)) --a;
    return {a, std::max(1, n / a)};
  }

  std::vector<int> dims_;  // empty: square_dims(H)
};

/// "dims", or empty when absent.
std::vector<int> read_dims(ObjectReader& params) {
  std::vector<int> dims;
  const json* value = params.find("dims");
  if (value == nullptr) return dims;
  if (!value->is_array() || value->size() < 2 || value->size() > 3) {
    std::string got = value->is_array()
                          ? fmt::format("an array of {} element{}", value->size(), value->size() == 1 ? "" : "s")
                          : json_type_name(*value);
    throw ConfigError(params.path_of("dims"), "expected an array of 2 or 3 positive integers, got " + got);
  }
  for (std::size_t i = 0; i < value->size(); ++i)
    dims.push_back(static_cast<int>(
        checked_integer((*value)[i], pointer_append(params.path_of("dims"), std::to_string(i)), 1, 1 << 20)));
  return dims;
}

}  // namespace
}  // namespace ddlsim::platforms

DDLSIM_REGISTER(ddlsim::platforms::TopologyBuilder, "torus", "2-D or 3-D wrap-around torus of hosts; param dims",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::platforms::TorusBuilder>(ddlsim::platforms::read_dims(params));
                })
