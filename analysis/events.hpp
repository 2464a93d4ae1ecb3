// ddlsim: outputs of the event-driven sync models (event_triggered, ordered_gradients,
// selective_sync): messages sent against the always-send baseline, and where the decisions came
// from (summary.json "events", the run table, iterations.csv's events columns).
#pragma once

#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddlsim::analysis {

struct EventTotals {
  std::int64_t sent = 0;
  std::int64_t possible = 0;  // the always-send baseline
  [[nodiscard]] std::int64_t saved() const { return possible - sent; }
  [[nodiscard]] double saved_fraction() const { return possible > 0 ? static_cast<double>(saved()) / static_cast<double>(possible) : 0.0; }
};

/// Totals over workers and iterations; nullopt when the sync model is not event-driven.
std::optional<EventTotals> event_totals(const sim::Scenario& scenario, const sim::SimulationResult& result);

/// summary.json's "events" object (null when the sync model is not event-driven).
nlohmann::json events_json(const sim::Scenario& scenario, const sim::SimulationResult& result);

/// The run table's line, e.g. "12,345 of 16,000 tensor puts to one neighbour sent (22.8 % saved); trace ...".
std::string events_line(const sim::Scenario& scenario, const sim::SimulationResult& result);

}  // namespace ddlsim::analysis
