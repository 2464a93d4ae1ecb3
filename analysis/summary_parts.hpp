// ddlsim: the pieces summary.json and the results table share (analysis/summary_json.cpp,
// analysis/summary_table.cpp): compression and adaptive compression as JSON.
#pragma once

#include "analysis/summary.hpp"

#include <nlohmann/json.hpp>

namespace ddlsim::analysis::detail {

/// The compressor's settings, wire and dense bytes, and codec costs (summary.json "compression").
nlohmann::json compression_json(const sim::Scenario& sc, const sim::SimulationResult& result);
/// Adaptive compression's candidates, choices and explorations (summary.json "adaptive_compression").
nlohmann::json adaptive_json(const sim::Scenario& sc, const sim::SimulationResult& result, const Summary& s);

}  // namespace ddlsim::analysis::detail
