// Test helper: run the ddlsim binary in a child process and capture its output.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ddlsim::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh empty directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("ddlsim-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name) << content;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

/// Runs `ddlsim <args>` (args are passed through the shell; quote as needed).
inline CommandResult ddlsim(const std::string& args) {
  TempDir tmp;
  const std::string cmd = std::string(DDLSIM_BINARY) + " " + args + " >" + tmp.file("out") + " 2>" + tmp.file("err");
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(tmp.path() / "out");
  r.err = slurp(tmp.path() / "err");
  return r;
}

/// A valid scenario named `name` that runs in milliseconds (4 workers on a star, 2 synthetic layers,
/// 1 iteration, BSP and a ring all-reduce): the base the bad-input tests spoil one value of.
inline nlohmann::json small_scenario(const std::string& name) {
  auto doc = nlohmann::json::parse(R"({
    "platform": {"topology": "star", "workers": 4, "link": {"bandwidth": "10Gbps", "latency": "1us"}},
    "workload": {"synthetic": {"layers": 2}, "iterations": 1},
    "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"}}
  })");
  doc["name"] = name;
  return doc;
}

/// Runs `ddlsim <args>` expecting bad input: exit code 2, nothing on stdout, exactly one line on
/// stderr, which is returned with every occurrence of `file` (if given) replaced by "FILE".
inline std::string bad_input(const std::string& args, const std::string& file = "") {
  auto r = ddlsim(args);
  CHECK_MESSAGE(r.exit_code == 2, args.substr(0, 200));
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  std::string err = r.err;
  if (!file.empty())
    for (auto pos = err.find(file); pos != std::string::npos; pos = err.find(file)) err.replace(pos, file.size(), "FILE");
  return err;
}

/// `ddlsim ARGS...` started in the background, without a shell (so signals reach it), its stdout
/// and stderr in files: for the tests that interrupt a run. Killed (SIGKILL) if still running
/// when destroyed.
class Background {
 public:
  explicit Background(const std::vector<std::string>& args) {
    std::vector<std::string> argv{DDLSIM_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = tmp_.file("out"), err = tmp_.file("err");
    pid_ = fork();
    if (pid_ == 0) {
      const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(o, 1);
      dup2(e, 2);
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execv(c[0], c.data());
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }
  void signal(int sig) const { kill(pid_, sig); }
  /// What it has written on stderr so far.
  [[nodiscard]] std::string err() const { return slurp(tmp_.path() / "err"); }
  /// Waits for the process to exit: its exit code (128 + the signal if a signal ended it).
  CommandResult wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    r.out = slurp(tmp_.path() / "out");
    r.err = slurp(tmp_.path() / "err");
    return r;
  }

 private:
  TempDir tmp_;
  pid_t pid_ = -1;
  bool waited_ = false;
};

/// The staging folder a run into `out` writes its files in first (".NAME.ddlsim-PID" beside it,
/// analysis/output_dir.hpp), if one exists.
inline std::optional<std::filesystem::path> staging_folder(const std::filesystem::path& out) {
  const std::string prefix = fmt::format(".{}", out.filename().string());
  for (const auto& e : std::filesystem::directory_iterator(out.parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name.substr(prefix.size()).starts_with(".ddlsim-")) return e.path();
  }
  return std::nullopt;
}

/// Polls `ready` every 10 ms for at most `seconds`; true once it holds.
template <class Ready>
bool poll_until(Ready ready, double seconds = 60) {
  for (int i = 0; i < static_cast<int>(seconds * 100); ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

/// A CSV table the binary writes (iterations.csv, links.csv, `ddlsim collectives --csv`), read by
/// column NAME, so that a column added or moved fails loudly instead of shifting what a test reads.
/// The binary quotes nothing (no cell holds a comma), so a line splits at every comma; an empty
/// trailing cell is kept.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // without the header

  /// `text`: a header line, then one line per row.
  static Csv parse(const std::string& text) {
    Csv csv;
    std::istringstream in(text);
    std::string line;
    if (std::getline(in, line)) csv.header = split(line);
    while (std::getline(in, line)) csv.rows.push_back(split(line));
    return csv;
  }
  static Csv read(const std::filesystem::path& file) { return parse(slurp(file)); }

  /// The index of column `name`; throws (failing the test) naming it and listing the header.
  [[nodiscard]] std::size_t column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end())
      throw std::runtime_error(fmt::format("CSV: no column \"{}\" in the header \"{}\"", name, header_line()));
    return static_cast<std::size_t>(it - header.begin());
  }
  /// Row `row`'s cell in column `name`.
  [[nodiscard]] const std::string& at(std::size_t row, const std::string& name) const {
    const auto c = column(name);
    if (row >= rows.size() || c >= rows[row].size())
      throw std::runtime_error(fmt::format("CSV: no cell \"{}\" in row {} of {} (\"{}\"; header \"{}\")", name, row,
                                           rows.size(), row < rows.size() ? line(row) : "", header_line()));
    return rows[row][c];
  }
  [[nodiscard]] double number(std::size_t row, const std::string& name) const { return std::stod(at(row, name)); }
  [[nodiscard]] int integer(std::size_t row, const std::string& name) const { return std::stoi(at(row, name)); }
  /// The first row whose column `name` is `value`, if any.
  [[nodiscard]] std::optional<std::size_t> find(const std::string& name, const std::string& value) const {
    const auto c = column(name);
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (c < rows[r].size() && rows[r][c] == value) return r;
    return std::nullopt;
  }
  [[nodiscard]] std::size_t size() const { return rows.size(); }
  /// The header and row `row` as comma-joined lines (for messages and header checks).
  [[nodiscard]] std::string header_line() const { return fmt::format("{}", fmt::join(header, ",")); }
  [[nodiscard]] std::string line(std::size_t row) const { return fmt::format("{}", fmt::join(rows.at(row), ",")); }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> cells;
    std::size_t from = 0;
    for (auto comma = line.find(','); comma != std::string::npos; comma = line.find(',', from)) {
      cells.push_back(line.substr(from, comma - from));
      from = comma + 1;
    }
    cells.push_back(line.substr(from));
    return cells;
  }
};

/// One row of `ddlsim collectives --csv`.
struct CollectiveRow {
  std::string operation, resolved;
  double analytic_s = 0;
  double simulated_s = -1;  // -1: not simulated (analytic fidelity)
  bool fastest = false;
};

/// The rows of `ddlsim collectives --csv` output, by algorithm; checks the header.
inline std::map<std::string, CollectiveRow> parse_collectives_csv(const std::string& out) {
  std::map<std::string, CollectiveRow> rows;
  const auto csv = Csv::parse(out);
  CHECK(csv.header_line() ==
        "algorithm,operation,resolved,analytic_time_s,simulated_time_s,algbw_GBps,busbw_GBps,fastest,flows");
  for (std::size_t i = 0; i < csv.size(); ++i) {
    REQUIRE(csv.rows[i].size() == 9);
    const std::string& simulated = csv.at(i, "simulated_time_s");
    rows[csv.at(i, "algorithm")] =
        CollectiveRow{csv.at(i, "operation"), csv.at(i, "resolved"), csv.number(i, "analytic_time_s"),
                      simulated.empty() ? -1.0 : std::stod(simulated), csv.at(i, "fastest") == "1"};
  }
  return rows;
}

/// Runs `ddlsim collectives --csv <args>` and parses its rows (exit code 0 required).
inline std::map<std::string, CollectiveRow> collectives_csv(const std::string& args) {
  auto r = ddlsim("collectives --csv " + args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return parse_collectives_csv(r.out);
}

}  // namespace ddlsim::test
