// ddlsim: what this machine allows a run (memory available, free disk, the wall-time limit) and
// the refusal of a run whose work estimate exceeds it (scenario/work_estimate.hpp: machine_limits,
// check_work; docs/reliability.md, "Work estimate").
#include "scenario/work_estimate.hpp"

#include "scenario/work_constants.hpp"

#include "models/error.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sys/statvfs.h>

namespace ddlsim::sim {
namespace {

using namespace work;  // the constants (scenario/work_constants.hpp)

double read_meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return -1;
}

double read_cgroup_limit() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string value;
  if (!(in >> value) || value == "max") return -1;
  std::ifstream cur("/sys/fs/cgroup/memory.current");
  double used = 0;
  cur >> used;
  return std::stod(value) - used;
}

}  // namespace

MachineLimits machine_limits(const std::string& output_dir) {
  MachineLimits m;
  m.wall_s = MAX_WALL_S;
  m.memory_bytes = read_meminfo_available();
  const double cgroup = read_cgroup_limit();
  if (cgroup >= 0 && (m.memory_bytes < 0 || cgroup < m.memory_bytes)) m.memory_bytes = cgroup;
  // The nearest folder of the output directory that exists.
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(output_dir, ec);
  while (!p.empty() && !std::filesystem::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  struct statvfs fs {};
  if (!p.empty() && statvfs(p.c_str(), &fs) == 0)
    m.disk_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  return m;
}

std::string format_duration(double seconds) {
  if (seconds < 10) return fmt::format("{:.2g} s", std::max(0.0, seconds));
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 48 * 3600) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

void check_work(const WorkEstimate& e, const MachineLimits& limits) {
  // The rest of the estimate, after the quantity a message is about.
  const std::string events =
      fmt::format("{:.3g} engine events over {} {}{}", e.events, e.iterations, e.unit, e.iterations == 1 ? "" : "s");
  const std::string memory = fmt::format("{} of memory", units::format_bytes(e.memory_bytes));
  // A comparison (ddlsim collectives) writes no files: its messages leave the output out.
  const std::string output = e.unit == "iteration" ? fmt::format("{} of output", units::format_bytes(e.output_bytes)) : "";
  const std::string wall = fmt::format("{} of wall time", format_duration(e.wall_s));
  const auto rest = [](std::initializer_list<std::string> parts) {
    std::string out;
    for (const auto& p : parts)
      if (!p.empty()) out += (out.empty() ? "" : ", ") + p;
    return out;
  };
  const auto largest = [&e](auto value) {
    const WorkTerm* top = &e.terms.front();
    for (const auto& t : e.terms)
      if (value(t) > value(*top)) top = &t;
    return top;
  };
  // "make the run smaller", "make the comparison smaller"
  const std::string ADVICE = fmt::format("make {} smaller, or pass --force to run it anyway (docs/reliability.md)",
                                         e.subject.rfind("this ", 0) == 0 ? "the " + e.subject.substr(5) : e.subject);
  if (limits.memory_bytes > 0 && e.memory_bytes > limits.memory_bytes) {
    const WorkTerm* top = largest([](const WorkTerm& t) { return t.memory_bytes; });
    throw ConfigError(top->path, fmt::format("{} is estimated at {} of memory, more than {} (most of it for the "
                                             "{}; {}): {}",
                                             e.subject, units::format_bytes(e.memory_bytes),
                                             limits.memory_given ? fmt::format("the --max-memory limit of {}",
                                                                               units::format_bytes(limits.memory_bytes))
                                                                 : fmt::format("the {} this machine has available",
                                                                               units::format_bytes(limits.memory_bytes)),
                                             top->what, rest({events, wall, output}), ADVICE));
  }
  if (limits.disk_bytes >= 0 && e.output_bytes > limits.disk_bytes)
    throw ConfigError(e.timeline_bytes > e.csv_bytes ? "/output/timeline" : "/output/iterations_csv",
                      fmt::format("{}'s outputs are estimated at {}, more than the {} free where they go ({}): "
                                  "turn off output.timeline or output.iterations_csv, or {}",
                                  e.subject, units::format_bytes(e.output_bytes), units::format_bytes(limits.disk_bytes),
                                  rest({events, wall, memory}), ADVICE));
  if (limits.wall_s > 0 && e.wall_s > limits.wall_s) {
    const std::string limit = limits.wall_given ? fmt::format("the --max-time limit of {}", format_duration(limits.wall_s))
                                                : fmt::format("the limit of {}", format_duration(limits.wall_s));
    // One iteration well within the limit: the iterations are what make the run long.
    if (e.per_iteration_s * 10 <= limits.wall_s && e.setup_s <= limits.wall_s / 2 &&
        e.per_iteration_s * e.iterations >= e.wall_s / 2)
      throw ConfigError("/workload/iterations",
                        fmt::format("{} is estimated at {} of wall time, above {} ({} iterations of {}; {}): {}",
                                    e.subject, format_duration(e.wall_s), limit, e.iterations, units::format_time(e.per_iteration_s),
                                    rest({events, memory, output}), ADVICE));
    const WorkTerm* top = largest([](const WorkTerm& t) { return t.wall_s; });
    throw ConfigError(top->path, fmt::format("{} is estimated at {} of wall time, above {} (most of it for the {}; "
                                             "{}): {}",
                                             e.subject, format_duration(e.wall_s), limit, top->what,
                                             rest({events, memory, output}), ADVICE));
  }
}

}  // namespace ddlsim::sim
