// ddlsim: `ddlsim list`: every name a scenario can give -- the registries (topologies, sync models,
// collectives, compressors), the software presets and the fixed choices (bucketing policies,
// logical graphs, routings, network models, fidelities, granularities, straggler noise) --
// each with the JSON path that takes it and one line about it.
#pragma once

#include "app/command.hpp"

#include <CLI/CLI.hpp>

namespace ddlsim::sim {

void print_lists();

/// `ddlsim list`: print_lists.
class ListCommand final : public Command {
 public:
  explicit ListCommand(CLI::App& app)
      : command_(app.add_subcommand("list", "list every name a scenario can give: topologies, sync models, collectives, "
                                            "compressors, software presets, bucketing policies, graphs, routings, ...")) {}
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  [[nodiscard]] int run(const Invocation&) const override {
    print_lists();
    return 0;
  }

 private:
  CLI::App* command_;
};

}  // namespace ddlsim::sim
