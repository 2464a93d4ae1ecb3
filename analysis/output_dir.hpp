// ddlsim: the output directory of `ddlsim run`, replaced all at once.
//
// The directory is checked before the simulation starts (bad input: a ConfigError naming
// --out or /output/dir). Every file is written into a staging folder, created only once there
// is something to write, and commit() puts them in place together:
//  - a directory that does not exist yet, or holds nothing but ddlsim's outputs: the staging
//    folder sits beside it (".NAME.ddlsim-PID") and is renamed onto it, or exchanged with it
//    atomically (renameat2 RENAME_EXCHANGE) and the old files removed; a reader sees all the old
//    files or all the new ones, never a mix;
//  - a directory that holds other files too (or whose parent is not writable): the staging
//    folder sits inside it and each file is renamed into place, summary.json last; a previous
//    run's output that this run does not write is removed first.
// A run that fails (or is killed) never leaves a partial file in the directory: the staging
// folder is removed on failure, and only a process killed outright leaves it behind.
// docs/outputs.md.
#pragma once

#include "scenario/output_limits.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ddlsim::analysis {

using sim::MAX_DIR_NAME_BYTES;  // scenario/output_limits.hpp
using sim::MAX_DIR_PATH_BYTES;

class OutputDir {
 public:
  /// The files `ddlsim run` writes; a directory holding only these is replaced whole.
  static const std::vector<std::string>& output_names();

  /// Checks that `dir` can be the output directory, leaving nothing behind (a probe folder is
  /// made and removed where the staging folder will go: access() passes root everywhere). `option` names it in the
  /// ConfigError ("--out" or "/output/dir"); `scenario_file` is refused as a directory by name.
  OutputDir(const std::string& dir, std::string option, const std::string& scenario_file = {});
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  /// The directory as given.
  [[nodiscard]] const std::string& dir() const { return given_; }
  /// `name` in the staging folder, which is created (with the directory's missing parents) on
  /// the first call.
  std::filesystem::path staged(const std::string& name);
  /// Puts the staged files (`names`, every one staged) in place; summary.json goes last.
  void commit(const std::vector<std::string>& names);

 private:
  [[nodiscard]] bool holds_only_outputs() const;
  void commit_file_by_file(const std::vector<std::string>& names);

  std::string given_;
  std::string option_;
  std::filesystem::path target_;   // absolute, normalised
  std::filesystem::path staging_;  // empty until staged() is first called
  bool beside_ = true;             // the staging folder sits beside the target (else inside it)
  bool committed_ = false;
  std::vector<std::filesystem::path> created_;  // parents created for the target, outermost first
};

}  // namespace ddlsim::analysis
