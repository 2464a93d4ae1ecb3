#include "engine/run_control.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace ddlsim::sim {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // the first signal received (GRACEFUL)
volatile std::sig_atomic_t g_stop_now = 0;  // STOP_GRACE_S have passed since it
std::atomic<int> g_mode{-1};              // -1: not installed
static_assert(std::atomic<int>::is_always_lock_free, "the handler reads the mode");

void say(const char* text) {
  // write(2) is async-signal-safe; fmt and iostreams are not.
  const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_stop_signal(int sig) {
  if (g_mode.load() == static_cast<int>(StopMode::EXIT) || g_signal != 0) {
    if (g_signal != 0) say("\nddlsim: second signal: exiting at once, nothing written\n");
    _exit(128 + sig);
  }
  g_signal = sig;
  alarm(STOP_GRACE_S);  // on_grace_over then stops the run within its iteration
  say(sig == SIGINT ? "\nddlsim: SIGINT: stopping after the current iteration, or within it after 2 s (send it again to "
                      "quit at once)\n"
                    : "\nddlsim: SIGTERM: stopping after the current iteration, or within it after 2 s (send it again "
                      "to quit at once)\n");
}

extern "C" void on_grace_over(int) {
  if (g_signal != 0) g_stop_now = 1;
}

void install(int mode) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM}) sigaction(sig, &action, nullptr);
  action.sa_handler = on_grace_over;
  sigaction(SIGALRM, &action, nullptr);
  g_mode.store(mode);
}

}  // namespace

void install_stop_handlers(StopMode mode) { install(static_cast<int>(mode)); }

void reinstall_stop_handlers() {
  if (const int mode = g_mode.load(); mode >= 0) install(mode);
}

int stop_signal() { return g_signal; }

bool stop_now() { return g_stop_now != 0; }

namespace {
bool g_skip_static_cleanup = false;
}  // namespace

void exit_without_static_cleanup() { g_skip_static_cleanup = true; }
bool static_cleanup_skipped() { return g_skip_static_cleanup; }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(signal);
  }
}

}  // namespace ddlsim::sim
