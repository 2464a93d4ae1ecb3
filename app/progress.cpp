#include "app/progress.hpp"

#include "models/error.hpp"
#include "scenario/work_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace ddlsim::sim {
namespace {

/// "0:07", "12:34", "1:02:03".
std::string clock(double seconds) {
  const auto s = static_cast<long>(std::max(0.0, std::round(seconds)));
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

ProgressStyle parse_progress_style(const std::string& text, const std::string& option) {
  if (text == "auto") return isatty(STDERR_FILENO) != 0 ? ProgressStyle::BAR : ProgressStyle::LINES;
  if (text == "bar") return ProgressStyle::BAR;
  if (text == "lines") return ProgressStyle::LINES;
  if (text == "none") return ProgressStyle::NONE;
  throw ConfigError(option, fmt::format("expected auto, bar, lines or none, got \"{}\"", text));
}

Progress::Progress(ProgressStyle style, int iterations) : style_(style), iterations_(std::max(1, iterations)) {}

Progress::~Progress() { finish(); }

void Progress::start(double wall_s, double events) {
  if (style_ == ProgressStyle::NONE || thread_.joinable()) return;
  estimate_s_ = wall_s;
  start_ = std::chrono::steady_clock::now();
  if (style_ == ProgressStyle::LINES && wall_s > LINE_INTERVAL_S)
    fmt::print(stderr, "ddlsim: estimated {} of wall time for {} iterations ({:.3g} engine events)\n",
               format_duration(wall_s), iterations_, events);
  thread_ = std::thread([this] { loop(); });
}

void Progress::update(int done, double simulated_s) {
  done_.store(done);
  simulated_s_.store(simulated_s);
}

void Progress::loop() {
  const auto interval = std::chrono::duration<double>(style_ == ProgressStyle::BAR ? 0.5 : LINE_INTERVAL_S);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) draw();
}

std::string Progress::line(double elapsed_s) const {
  const int done = done_.load();
  const double fraction = std::clamp(static_cast<double>(done) / iterations_, 0.0, 1.0);
  // The measured rate once an iteration has completed; until then what the estimate leaves.
  const std::string eta = done > 0           ? clock(elapsed_s / done * (iterations_ - done))
                          : estimate_s_ >= 0 ? fmt::format("~{}", clock(estimate_s_ - elapsed_s))
                                             : std::string("?");
  if (const char* what = phase_.load(); what != nullptr && done == 0)
    return fmt::format("ddlsim: {}{} elapsed {}, ETA {}", what, style_ == ProgressStyle::BAR ? "..." : ":",
                       clock(elapsed_s), eta);
  if (style_ == ProgressStyle::BAR) {
    const auto filled = static_cast<std::size_t>(fraction * 20);
    return fmt::format("ddlsim: [{}{}] {:5.1f}%  {}/{} iterations  simulated {:.4g} s  elapsed {}  ETA {}",
                       std::string(filled, '#'), std::string(20 - filled, '.'), 100 * fraction, done, iterations_,
                       simulated_s_.load(), clock(elapsed_s), eta);
  }
  return fmt::format("ddlsim: progress: {}/{} iterations ({:.1f} %), simulated {:.4g} s, elapsed {}, ETA {}", done,
                     iterations_, 100 * fraction, simulated_s_.load(), clock(elapsed_s), eta);
}

void Progress::draw() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string text = line(elapsed);
  if (style_ == ProgressStyle::BAR) {
    // Spaces over what a longer previous line left.
    fmt::print(stderr, "\r{}{}", text, std::string(drawn_ > text.size() ? drawn_ - text.size() : 0, ' '));
    drawn_ = text.size();
  } else {
    fmt::print(stderr, "{}\n", text);
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (style_ == ProgressStyle::BAR) {
    draw();
    fmt::print(stderr, "\n");
  }
}

}  // namespace ddlsim::sim
