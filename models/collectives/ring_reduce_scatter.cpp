// Ring reduce-scatter: `bytes` = M is every rank's input; rank r ends with the
// reduced block r of M/N bytes.
//
// In each of the N-1 steps rank r sends one partially reduced block of M/N
// bytes to r+1 and receives one from r-1 (mod N), both at once; every NIC
// direction carries a single flow, so each step costs alpha + (M/N) beta:
//
//     T_rs(N, M) = (N-1) alpha + (N-1)/N * M * beta             (T = 0 for N = 1)
//
// Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005; Patarasuk & Yuan,
// JPDC 2009 (first half of the ring all-reduce).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

/// The schedule and closed form are the shared ring pass; only the operation differs.
class RingReduceScatter final : public detail::RingPass {
 public:
  [[nodiscard]] std::string operation() const override { return "reduce_scatter"; }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "ring_reduce_scatter",
                "ring reduce-scatter of M bytes: N-1 steps of M/N, (N-1)a + (N-1)/N M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::RingReduceScatter>(); })
