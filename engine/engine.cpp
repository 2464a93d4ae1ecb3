#include "engine/engine.hpp"

#include "engine/run_control.hpp"
#include "engine/schedule_executor.hpp"

#include "models/error.hpp"

#include <fmt/format.h>
#include <fstream>
#include <malloc.h>
#include <string>
#include <utility>
#include <xbt/config.hpp>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

// Built with AddressSanitizer (-DDDLSIM_SANITIZE=address,...; docs/reliability.md, "Sanitizers"):
// Debian's SimGrid switches its actors' stacks without telling the sanitizer, which then reports
// false errors on them, so actors run on threads, which it follows.
#if defined(__SANITIZE_ADDRESS__)
#define DDLSIM_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DDLSIM_ADDRESS_SANITIZER 1
#endif
#endif

namespace ddlsim::sim {
namespace {

void configure_network(sg4::Engine& engine, const NetworkSpec& net) {
  // SimGrid 3.32's default lazy action update ("Lazy") finishes some flows too
  // early when a new flow starts after a finished flow on a link with latency
  // > 0: a parameter server's pulls over heterogeneous links completed faster
  // than their links allow (tests/engine/correctness_test.cpp). "Full" recomputes
  // every action's share at every event and is exact; measured at most ~17 %
  // slower on our flow scenarios (docs/engine.md, "Exact flow updates").
  engine.set_config("network/optim:Full");
  // No TCP window: CM02 bounds a flow's rate by min(its user rate, gamma / (2 latency)), and
  // gamma = 0 would make that bound 0, which LMM reads as "no bound" -- dropping the rate caps
  // that software costs put on flows (models/software_cost.hpp). A window of 1e30 bytes binds
  // no flow, and a flow's own rate cap stays in force.
  constexpr const char* NO_TCP_WINDOW = "network/TCP-gamma:1e30";
  if (net.fidelity == Fidelity::PACKET) {  // ns-3 sends every byte (engine/ns3_binding.hpp)
    set_byte_scale(1);
    engine.set_config("network/model:ns-3");
    return;
  }
  set_byte_scale(1024);
  switch (net.model) {
    case NetworkModel::IDEAL:
      engine.set_config("network/model:CM02");
      engine.set_config("network/crosstraffic:0");
      engine.set_config(NO_TCP_WINDOW);
      break;
    case NetworkModel::CALIBRATED:
      engine.set_config("network/model:CM02");
      engine.set_config("network/crosstraffic:0");
      engine.set_config(NO_TCP_WINDOW);
      engine.set_config(fmt::format("network/latency-factor:{}", net.latency_factor));
      engine.set_config(fmt::format("network/bandwidth-factor:{}", net.bandwidth_factor));
      break;
    case NetworkModel::TCP:
      engine.set_config("network/model:LV08");
      // Window and weight are in bytes: rescale them to payload units.
      engine.set_config(fmt::format("network/TCP-gamma:{}", 4194304.0 * byte_scale()));
      engine.set_config(fmt::format("network/weight-S:{}", 20537.0 * byte_scale()));
      break;
  }
}

long read_long(const char* file, long fallback) {
  std::ifstream in(file);
  long v = fallback;
  return in >> v ? v : fallback;
}

long mappings_in_use() {
  std::ifstream in("/proc/self/maps");
  long lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

}  // namespace

std::string EngineSession::reserve_actors(int workers, int per_worker, int fixed) {
  const long limit = read_long("/proc/sys/vm/max_map_count", 65530);
  // Headroom for what the run maps besides stacks (large allocations, libraries loaded late).
  const long available = limit - mappings_in_use() - 1000 - limit / 50;
  const long actors = static_cast<long>(workers) * per_worker + fixed;
  const int guard = simgrid::config::get_value<int>("contexts/guard-size");
  const long per_actor = guard > 0 ? 2 : 1;
  if (actors * per_actor <= available) return {};
  if (actors <= available) {
    engine_->set_config("contexts/guard-size:0");
    return fmt::format("{} SimGrid actors with guard pages would need {} memory mappings (vm.max_map_count = {}): "
                       "stack guard pages turned off for this run",
                       actors, actors * per_actor, limit);
  }
#ifndef DDLSIM_ADDRESS_SANITIZER
  // Too many even for one mapping each: SimGrid allocates a guard-less stack with calloc, so with
  // glibc's malloc and its mmap turned off every stack is carved from the heap (one mapping for all).
  // Fresh heap memory is not cleared by calloc, so a stack costs only the pages it touches; without
  // the top pad, no page is cleared ahead of the next stack. Large allocations stay on the heap until
  // the process ends. jemalloc (which the ddlsim executable links, CMakeLists.txt) ignores mallopt
  // but carves its large allocations from a few growing mappings anyway (100,000 workers at flow
  // fidelity, 200,000 stacks, run with either allocator: docs/performance.md).
  engine_->set_config("contexts/guard-size:0");
  ::mallopt(M_MMAP_MAX, 0);
  ::mallopt(M_TOP_PAD, 0);
  return fmt::format("{} SimGrid actors would need {} memory mappings, more than the {} a process may hold here "
                     "(vm.max_map_count): their stacks are carved from the heap, without guard pages, for this run",
                     actors, actors, limit);
#else
  // Under AddressSanitizer actors run on threads, whose stacks are mappings whatever malloc does.
  const long fit = std::max(0L, (available - fixed) / per_worker);
  throw ConfigError("/platform/workers",
                    fmt::format("{} workers need {} SimGrid actors, one stack mapping each, but a process may hold "
                                "{} memory mappings here (vm.max_map_count): at most {} workers fit on SimGrid actors (analytic "
                                "fidelity runs any count without them when workers only compute and all-reduce); "
                                "raise the limit as root with `sysctl -w vm.max_map_count={}`",
                                workers, actors, limit, fit, (actors + 2000 + limit / 50) * 2));
#endif
}

namespace {
struct StopNow {};
bool g_stoppable = false;  // a run_stoppable() is in progress
}  // namespace

bool EngineSession::run_stoppable() {
  // SimGrid's signals are static: connected once per process.
  static const bool connected = [] {
    sg4::Engine::on_time_advance_cb([](double) {
      if (g_stoppable && stop_now()) throw StopNow{};
    });
    return true;
  }();
  (void)connected;
  g_stoppable = true;
  try {
    engine_->run();
  } catch (const StopNow&) {
    g_stoppable = false;
    stopped_ = true;
    return true;
  }
  g_stoppable = false;
  return false;
}

EngineSession::EngineSession(const std::vector<std::string>& engine_args, const NetworkSpec& network) {
  xbt_log_control_set("root.thres:warning");
  args_.emplace_back("ddlsim");
#ifdef DDLSIM_ADDRESS_SANITIZER
  args_.emplace_back("--cfg=contexts/factory:thread");  // read when the engine starts, not later
#endif
  args_.insert(args_.end(), engine_args.begin(), engine_args.end());
  for (auto& a : args_) argv_.push_back(a.data());
  int argc = static_cast<int>(argv_.size());
  engine_ = std::make_unique<sg4::Engine>(&argc, argv_.data());
  reinstall_stop_handlers();  // the engine replaced SIGINT's handler with its own (exit 1)
  configure_network(*engine_, network);
  // An expert's --cfg= has the last word over the network model's settings (e.g. network/optim).
  for (const auto& arg : engine_args)
    if (arg.rfind("--cfg=", 0) == 0) engine_->set_config(arg.substr(6));
  auto flag = deadlock_;
  sg4::Engine::on_deadlock_cb([flag]() { *flag = true; });
}

}  // namespace ddlsim::sim
