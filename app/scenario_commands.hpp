// ddlsim: `ddlsim validate` (load and check a scenario, one line) and `ddlsim platform` (build its
// topology and describe it; --links, --dot).
#pragma once

#include "app/command.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ddlsim::sim {

class ValidateCommand final : public Command {
 public:
  explicit ValidateCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  [[nodiscard]] int run(const Invocation& invocation) const override;

 private:
  CLI::App* command_ = nullptr;
  std::string scenario_file_;
  std::vector<std::string> overrides_;
};

class PlatformCommand final : public Command {
 public:
  explicit PlatformCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  [[nodiscard]] int run(const Invocation& invocation) const override;

 private:
  CLI::App* command_ = nullptr;
  CLI::Option* dot_option_ = nullptr;
  std::string scenario_file_, dot_file_;
  std::vector<std::string> overrides_;
  bool list_links_ = false;
};

}  // namespace ddlsim::sim
