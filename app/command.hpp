// ddlsim: one subcommand of the CLI (app/main.cpp): it adds itself and its options to the app, and
// runs once CLI11 has parsed it. main() keeps one of each, in the order `ddlsim --help` lists them.
#pragma once

#include <string>
#include <vector>

namespace ddlsim::sim {

/// What every command may need beyond its own options.
struct Invocation {
  std::vector<std::string> engine_args;  // SimGrid's --cfg= and --log= flags, passed to the engine
  std::vector<std::string> argv;         // the rest of the command line (calibrate records it)
};

class Command {
 public:
  virtual ~Command() = default;
  /// True if this is the subcommand the command line named.
  [[nodiscard]] virtual bool parsed() const = 0;
  /// Runs it; returns the exit code. Throws ConfigError on bad input.
  [[nodiscard]] virtual int run(const Invocation& invocation) const = 0;
};

}  // namespace ddlsim::sim
