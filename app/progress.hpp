// ddlsim: the progress of a run on stderr, with an estimated time to completion.
//
// Until the simulation starts, the line says what the run is doing instead (phase(): building the
// platform, which takes minutes on millions of links).
// On a terminal, one line redrawn in place twice a second: a bar, the iterations completed,
// the simulated time, the wall time elapsed and the ETA. Elsewhere (a log, a pipe), one line
// every LINE_INTERVAL_S, after a first line with the work estimate when the run is expected to
// take longer than that; a short run prints nothing. A thread of its own draws it, so the
// elapsed time and the ETA move on while one long iteration runs. The ETA is the work
// estimate's until an iteration completes, then the measured rate's. docs/outputs.md.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ddlsim::sim {

enum class ProgressStyle { NONE, BAR, LINES };

/// auto: BAR when stderr is a terminal, else LINES; bar, lines, none. Throws ConfigError (at
/// `option`) naming the choices otherwise.
ProgressStyle parse_progress_style(const std::string& text, const std::string& option);

class Progress {
 public:
  static constexpr double LINE_INTERVAL_S = 10;

  Progress(ProgressStyle style, int iterations);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// The run is about to start, estimated at `wall_s` of wall time and `events` engine events.
  void start(double wall_s, double events);
  /// `done` iterations completed, at simulated time `simulated_s` (a ProgressCallback).
  void update(int done, double simulated_s);
  /// What the run is doing before its first iteration completes, shown instead of the iteration
  /// count ("building the platform"; a string literal), or nullptr once it simulates.
  void phase(const char* what) { phase_.store(what); }
  /// Draws the last state and ends the line (the bar).
  void finish();

  /// "ddlsim: [#####.....]  50.0%  5/10 iterations  simulated 1.2 s  elapsed 0:03  ETA 0:03"
  /// (BAR) or "ddlsim: progress: 5/10 iterations (50.0 %), simulated 1.2 s, elapsed 3 s, ETA 3 s" (LINES).
  [[nodiscard]] std::string line(double elapsed_s) const;

 private:
  void loop();
  void draw();

  ProgressStyle style_;
  int iterations_;
  double estimate_s_ = -1;
  std::atomic<int> done_{0};
  std::atomic<double> simulated_s_{0};
  std::atomic<const char*> phase_{nullptr};
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  std::size_t drawn_ = 0;  // characters of the bar's last line
};

}  // namespace ddlsim::sim
