// Ring all-gather: `bytes` = M is the total output size, M/N per rank.
//
// In each of the N-1 steps rank r sends one block of M/N bytes to r+1 and
// receives one from r-1 (mod N), both at once; every NIC direction carries a
// single flow, so each step costs alpha + (M/N) beta:
//
//     T_ag(N, M) = (N-1) alpha + (N-1)/N * M * beta             (T = 0 for N = 1)
//
// Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005 (ring all-gather);
// Patarasuk & Yuan, JPDC 2009.
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

/// The schedule and closed form are the shared ring pass; only the operation differs.
class RingAllgather final : public detail::RingPass {
 public:
  [[nodiscard]] std::string operation() const override { return "allgather"; }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "ring_allgather",
                "ring all-gather of M total bytes: N-1 steps of M/N, (N-1)a + (N-1)/N M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::RingAllgather>(); })
