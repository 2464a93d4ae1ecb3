// fp16: gradients cast to IEEE half precision for communication (Micikevicius et al., "Mixed precision
// training", ICLR 2018; seed 001: reduced-precision communication).
// Two bytes per element; every worker's cast tensor has the same layout, so they are summed in
// transit by any all-reduce (in fp16, cast back after).
#include "models/compressor.hpp"

DDLSIM_REGISTER(ddlsim::models::Compressor, "fp16", "fp16 communication: 2 bytes per element, summable by any all-reduce",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::TwoByteFloat>(); })
