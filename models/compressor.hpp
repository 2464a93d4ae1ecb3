// ddlsim: the Compressor interface: wire bytes and compute cost for a tensor.
#pragma once

#include "models/registry.hpp"

namespace ddlsim::models {

class Compressor {
 public:
  virtual ~Compressor() = default;
  /// Bytes on the wire for a dense gradient of `bytes` bytes.
  [[nodiscard]] virtual double wire_bytes(double bytes) const = 0;
  /// Encode + decode compute seconds for a gradient of `bytes` bytes.
  [[nodiscard]] virtual double compute_s(double bytes) const = 0;
};

using CompressorRegistry = Registry<Compressor>;

}  // namespace ddlsim::models
