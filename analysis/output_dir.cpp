#include "analysis/output_dir.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace ddlsim::analysis {
namespace fs = std::filesystem;
namespace {

bool writable(const fs::path& dir) { return access(dir.c_str(), W_OK | X_OK) == 0; }

/// Why no folder can be made in `dir` (empty when one can): access() passes root everywhere, so a
/// probe folder is made and removed at once. /proc and /sys take no folders even from root.
std::string cannot_make_folder_in(const fs::path& dir) {
  std::string probe = (dir / ".ddlsim-probe-XXXXXX").string();
  if (mkdtemp(probe.data()) != nullptr) {
    rmdir(probe.c_str());
    return {};
  }
  const int error = errno;
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) == 0 && fs.f_blocks == 0)
    return "it is on a file system without storage (such as /proc or /sys), which holds no outputs";
  return std::strerror(error);
}

/// True when `a` and `b` are on different file systems (a mount point and its parent).
bool different_devices(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev != sb.st_dev;
}

/// `path` lexically normalised, without a trailing separator ("out/x/" -> "out/x").
fs::path normalised(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

}  // namespace

const std::vector<std::string>& OutputDir::output_names() {
  static const std::vector<std::string> names{"summary.json", "iterations.csv", "links.csv", "timeline.json"};
  return names;
}

OutputDir::OutputDir(const std::string& dir, std::string option, const std::string& scenario_file)
    : given_(dir), option_(std::move(option)) {
  const auto fail = [this](const std::string& message) {
    throw ConfigError(option_, fmt::format("\"{}\" {}", excerpt(given_), message));
  };
  std::error_code ec;
  const fs::path path = normalised(dir);
  // Names the file system cannot hold are refused here, not by a filesystem_error halfway through.
  for (const auto& part : path)
    if (part.native().size() > 255)
      fail(fmt::format("has a name of {} bytes; a file system takes at most 255", part.native().size()));
  if (path.filename().native().size() > MAX_DIR_NAME_BYTES)
    fail(fmt::format("ends in a name of {} bytes; an output directory's name may have at most {} (room for its staging "
                     "folder beside it)",
                     path.filename().native().size(), MAX_DIR_NAME_BYTES));
  if (fs::absolute(path, ec).native().size() > MAX_DIR_PATH_BYTES)
    fail(fmt::format("is {} bytes long as an absolute path; an output directory's may have at most {}",
                     fs::absolute(path, ec).native().size(), MAX_DIR_PATH_BYTES));
  // Symbolic links resolved: a link to a directory has its directory's files replaced, not itself.
  target_ = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) target_ = fs::absolute(path, ec).lexically_normal();
  if (target_.filename().empty() && target_ != target_.root_path()) target_ = target_.parent_path();
  const auto status = fs::status(path, ec);
  if (fs::exists(status)) {
    if (!scenario_file.empty() && fs::equivalent(path, scenario_file, ec)) fail("is the scenario file, not a directory");
    if (fs::is_regular_file(status)) fail("is a file, not a directory");
    if (!fs::is_directory(status)) fail("is not a directory");
    if (!writable(path)) fail(fmt::format("is not writable: {}", std::strerror(errno)));
    const fs::path parent = target_.parent_path();
    // Beside it when its parent takes a new folder on the same file system; else inside it.
    beside_ = target_ != target_.root_path() && writable(parent) && !different_devices(target_, parent) &&
              holds_only_outputs() && cannot_make_folder_in(parent).empty();
    if (const auto why = cannot_make_folder_in(beside_ ? parent : target_); !why.empty())
      fail(fmt::format("is not writable: {}", why));
    return;
  }
  // The nearest existing folder must be a writable directory.
  fs::path ancestor = path.parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec)) ancestor = ancestor.parent_path();
  if (ancestor.empty()) ancestor = ".";
  if (!fs::is_directory(ancestor, ec)) fail(fmt::format("cannot be created: \"{}\" is not a directory", ancestor.string()));
  if (!writable(ancestor)) fail(fmt::format("cannot be created in \"{}\": {}", ancestor.string(), std::strerror(errno)));
  if (const auto why = cannot_make_folder_in(ancestor); !why.empty())
    fail(fmt::format("cannot be created in \"{}\": {}", ancestor.string(), why));
}

OutputDir::~OutputDir() {
  if (committed_) return;
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ec);  // only if empty
}

bool OutputDir::holds_only_outputs() const {
  const auto& names = output_names();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target_, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = std::find(names.begin(), names.end(), name) != names.end() ||
                      (name.size() > 4 && name.ends_with(".tmp") &&
                       std::find(names.begin(), names.end(), name.substr(0, name.size() - 4)) != names.end());
    if (!ours) return false;
  }
  return !ec;
}

fs::path OutputDir::staged(const std::string& name) {
  if (staging_.empty()) {
    if (beside_) {
      std::vector<fs::path> missing;
      for (fs::path p = target_.parent_path(); !fs::exists(p) && p != p.root_path(); p = p.parent_path())
        missing.push_back(p);
      for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        fs::create_directory(*it);
        created_.push_back(*it);
      }
    }
    staging_ = beside_ ? target_.parent_path() / fmt::format(".{}.ddlsim-{}", target_.filename().string(), getpid())
                       : target_ / fmt::format(".ddlsim-{}", getpid());
    fs::remove_all(staging_);  // a folder a killed process of the same id left
    fs::create_directory(staging_);
  }
  return staging_ / name;
}

void OutputDir::commit(const std::vector<std::string>& names) {
  if (staging_.empty()) staged("");
  std::error_code ec;
  if (beside_ && !fs::exists(target_, ec)) {
    fs::rename(staging_, target_);
  } else if (beside_ && holds_only_outputs() &&
             renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staging_);  // the previous run's files
  } else {
    // Other files in the directory (since the check, too), or no atomic exchange on this file system.
    commit_file_by_file(names);
    fs::remove_all(staging_);
  }
  committed_ = true;
}

void OutputDir::commit_file_by_file(const std::vector<std::string>& names) {
  fs::create_directories(target_);
  std::error_code ec;
  for (const auto& old : output_names())
    if (std::find(names.begin(), names.end(), old) == names.end()) fs::remove(target_ / old, ec);
  std::vector<std::string> order = names;
  std::stable_partition(order.begin(), order.end(), [](const std::string& n) { return n != "summary.json"; });
  for (const auto& name : order) fs::rename(staging_ / name, target_ / name);
}

}  // namespace ddlsim::analysis
