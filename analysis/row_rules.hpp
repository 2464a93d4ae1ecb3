// ddlsim: `ddlsim calibrate --holdout` and `--select`: a spec (COLUMN=V1,V2 with units allowed, or
// every=K) as a predicate on a measurement row and its index (analysis/calibration.cpp uses them).
#pragma once

#include "analysis/measurements.hpp"

#include <cstddef>
#include <functional>
#include <string>

namespace ddlsim::analysis {

/// The rows `spec` names; throws ConfigError at `path` ("--holdout" or "--select": every=K only
/// with --holdout) for a spec it cannot read, naming the valid columns.
std::function<bool(const Measurement&, std::size_t)> row_rule(const std::string& spec, const std::string& path);

}  // namespace ddlsim::analysis
