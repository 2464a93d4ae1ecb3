#include "analysis/events.hpp"

#include <fmt/format.h>

namespace ddlsim::analysis {

std::optional<EventTotals> event_totals(const sim::Scenario& sc, const sim::SimulationResult& result) {
  if (sc.training.sync_model->events_unit().empty()) return std::nullopt;
  EventTotals t;
  for (const auto& w : result.totals.workers) {
    t.sent += w.events_sent;
    t.possible += w.events_possible;
  }
  return t;
}

nlohmann::json events_json(const sim::Scenario& sc, const sim::SimulationResult& result) {
  const auto t = event_totals(sc, result);
  if (!t) return nullptr;
  double bytes = 0;
  for (const auto& w : result.workers) bytes += w.bytes_sent;
  return {{"unit", sc.training.sync_model->events_unit()},
          {"sent", t->sent},
          {"always_send_baseline", t->possible},
          {"saved", t->saved()},
          {"saved_fraction", t->saved_fraction()},
          {"bytes_sent_by_workers", bytes},
          {"decisions", sc.training.sync_model->decisions()}};
}

std::string events_line(const sim::Scenario& sc, const sim::SimulationResult& result) {
  const auto t = event_totals(sc, result);
  if (!t) return {};
  std::string line = fmt::format("{} of {} sent, {} saved ({:.1f} %); one event = {}", t->sent, t->possible, t->saved(),
                                 100 * t->saved_fraction(), sc.training.sync_model->events_unit());
  const auto d = sc.training.sync_model->decisions();
  if (d.is_object() && d.contains("trace") && d["trace"].contains("final_epoch"))
    line += fmt::format("; {} {}, its recorded test accuracy {:.1f} %", d["source"].get<std::string>() == "trace" ? "replayed from" : "surrogate of",
                        d["trace_file"].get<std::string>(), 100 * d["trace"]["final_epoch"]["test_accuracy"].get<double>());
  else if (d.is_object())
    line += fmt::format("; decisions: {}", d["source"].get<std::string>());
  return line;
}

}  // namespace ddlsim::analysis
