// bf16: gradients cast to bfloat16 (8-bit exponent, 7-bit mantissa) for communication (Kalamkar et al.,
// "A study of BFLOAT16 for deep learning training", 2019).
// Two bytes per element; every worker's cast tensor has the same layout, so they are summed in
// transit by any all-reduce (in bf16, cast back after).
#include "models/compressor.hpp"

DDLSIM_REGISTER(ddlsim::models::Compressor, "bf16", "bf16 communication: 2 bytes per element, summable by any all-reduce",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::TwoByteFloat>(); })
