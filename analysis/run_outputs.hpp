// ddlsim: the files of `ddlsim run`, written as the run produces them.
//
// iterations.csv gets each iteration's rows once every worker has ended it, and timeline.json
// each event as it is recorded, so neither is held in memory; links.csv and summary.json are
// written at the end. Everything goes into the OutputDir's staging folder and is put in place
// by finish(). Every file and column is documented in docs/outputs.md.
#pragma once

#include "analysis/convergence_outputs.hpp"
#include "analysis/output_dir.hpp"
#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddlsim::analysis {

class RunOutputs final : public sim::RecordSink {
 public:
  RunOutputs(const sim::Scenario& scenario, OutputDir& dir);

  void iteration(int iteration, const std::vector<sim::IterationRecord>& workers,
                 const sim::IterationCompression& compression) override;
  void iteration_by_class(int iteration, const std::vector<sim::IterationRecord>& records,
                          const std::vector<int>& slot_of, const sim::IterationCompression& compression) override;
  void trace(const sim::TraceEvent& event) override;

  /// Ends the streamed files, writes links.csv and `summary`, and puts every file in place.
  void finish(const sim::SimulationResult& result, const nlohmann::json& summary);
  /// The files finish() wrote, summary.json first.
  [[nodiscard]] const std::vector<std::string>& written() const { return written_; }
  /// The co-simulated training (training.convergence); null without one.
  [[nodiscard]] ConvergenceOutputs* convergence() { return convergence_.get(); }

 private:
  std::ofstream& open(std::ofstream& out, const std::string& name);
  /// A row of iterations.csv after "worker,iteration,": the record's columns, `tail` (cr,
  /// collective, exploring), the events columns where the sync model has them, the newline.
  void append_row_rest(fmt::memory_buffer& text, const sim::IterationRecord& r, const std::string& tail) const;
  void write_file(const std::string& name, const std::string& content);
  void close(std::ofstream& out, const std::string& name);

  const sim::Scenario& scenario_;
  OutputDir& dir_;
  std::ofstream csv_;
  std::ofstream timeline_;
  bool events_columns_ = false;  // event-driven sync models: events_sent, events_saved
  bool first_event_ = true;
  std::vector<std::string> written_;
  std::ofstream convergence_csv_;
  std::unique_ptr<ConvergenceOutputs> convergence_;
};

/// links.csv of a run.
std::string links_csv(const sim::SimulationResult& result);

}  // namespace ddlsim::analysis
