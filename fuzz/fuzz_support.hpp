// What every fuzz target checks (fuzz/README in docs/reliability.md, "Fuzzing"): an input is either
// accepted or refused with one ddlsim::ConfigError whose message is one bounded line. Any other
// exception escapes to libFuzzer, which reports it as a crash ("uncaught exception"), as does a
// sanitizer report, a hang past -timeout or a message that breaks the promise.
#pragma once

#include "models/error.hpp"

#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>

namespace ddlsim::fuzz {

/// The folder of the bundled scenarios, where relative profile and trace names resolve:
/// $DDLSIM_FUZZ_SCENARIOS when set (a relocated tree), else the source tree's scenarios/.
std::string scenarios_dir();

/// Aborts (a finding) unless `message` is what exit code 2 promises: one line, not empty, bounded.
inline void check_refusal(std::string_view message) {
  constexpr std::size_t bound = MAX_PATH_CHARS + 2 + MAX_MESSAGE_CHARS + 64;
  const bool ok = !message.empty() && message.find('\n') == std::string_view::npos && message.size() <= bound;
  if (!ok) {
    std::fprintf(stderr, "fuzz: a refusal that is not one bounded line (%zu bytes): %.300s\n", message.size(),
                 std::string(message).c_str());
    std::abort();
  }
}

/// Runs `f`; a ConfigError is a refusal and must be one bounded line; anything else propagates.
template <class F>
void expect_accepted_or_refused(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    check_refusal(e.what());
  }
}

}  // namespace ddlsim::fuzz
