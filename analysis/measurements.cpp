#include "analysis/measurements.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <sstream>

namespace ddlsim::analysis {

const char* const MEASUREMENT_CSV_HEADER =
    "op,algorithm,ranks,servers,bytes,seconds,repeats,backend,bandwidth_bps,latency_s,source";

const std::vector<std::string>& measurement_ops() {
  static const std::vector<std::string> ops{"allreduce", "allgather", "broadcast", "reduce_scatter"};
  return ops;
}

namespace {

constexpr std::size_t MAX_SHOWN = 40;  // characters of a bad cell echoed in a message

std::string shown(const std::string& text) {
  return text.size() <= MAX_SHOWN ? text : text.substr(0, MAX_SHOWN) + "...";
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::optional<double> to_double(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

struct Cells {
  std::string where;  // FILE:LINE
  std::vector<std::string> cells;
  const std::vector<std::string>& names;

  [[nodiscard]] const std::string& cell(const std::string& column) const {
    const auto i = static_cast<std::size_t>(std::find(names.begin(), names.end(), column) - names.begin());
    return cells[i];
  }
  [[nodiscard]] double number(const std::string& column, double min, double max, const char* what) const {
    const auto v = to_double(cell(column));
    if (!v || *v < min || *v > max)
      throw ConfigError(where, fmt::format("{}: expected {}, got \"{}\"", column, what, shown(cell(column))));
    return *v;
  }
  [[nodiscard]] int integer(const std::string& column, int min, int max) const {
    const double v = number(column, min, max, fmt::format("an integer in [{}, {}]", min, max).c_str());
    if (v != std::floor(v))
      throw ConfigError(where, fmt::format("{}: expected an integer in [{}, {}], got \"{}\"", column, min, max,
                                           shown(cell(column))));
    return static_cast<int>(v);
  }
  [[nodiscard]] std::optional<double> optional_number(const std::string& column, double min, double max,
                                                      const char* what) const {
    if (cell(column).empty()) return std::nullopt;
    return number(column, min, max, what);
  }
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

void check_op(const std::string& op, const std::string& where) {
  const auto& ops = measurement_ops();
  if (std::find(ops.begin(), ops.end(), op) == ops.end())
    throw ConfigError(where, fmt::format("op: unknown operation \"{}\"; valid operations are: allreduce, allgather, "
                                         "broadcast, reduce_scatter",
                                         shown(op)));
}

MeasurementFile read_csv(const std::string& file, std::istream& in) {
  static const std::vector<std::string> names = split_csv(MEASUREMENT_CSV_HEADER);
  MeasurementFile out{"ddlsim-csv", {}};
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const std::string where = fmt::format("{}:{}", file, number);
    if (!header) {
      if (text != MEASUREMENT_CSV_HEADER)
        throw ConfigError(where, fmt::format("expected the measurement CSV header \"{}\", got \"{}\"",
                                             MEASUREMENT_CSV_HEADER, shown(text)));
      header = true;
      continue;
    }
    Cells c{where, split_csv(text), names};
    if (c.cells.size() != names.size())
      throw ConfigError(where, fmt::format("expected {} cells ({}), got {}", names.size(), MEASUREMENT_CSV_HEADER,
                                           c.cells.size()));
    Measurement m;
    m.line = number;
    m.op = c.cell("op");
    check_op(m.op, where);
    m.algorithm = c.cell("algorithm");
    if (m.algorithm.empty()) throw ConfigError(where, "algorithm: empty (a ddlsim collective or \"library\")");
    m.ranks = c.integer("ranks", 1, 1'000'000);
    m.servers = c.integer("servers", 0, 1'000'000);
    m.bytes = c.number("bytes", 1, 1e15, "a size in bytes in [1, 1e15]");
    m.seconds = c.number("seconds", 1e-9, 1e6, "a time in seconds in [1e-9, 1e6]");
    m.repeats = c.cell("repeats").empty() ? 0 : c.integer("repeats", 1, 1'000'000'000);
    m.backend = c.cell("backend");
    if (auto bps = c.optional_number("bandwidth_bps", 1, 1e15, "a rate in bits/s in [1, 1e15], or empty"))
      m.bandwidth_Bps = *bps / 8;
    m.latency_s = c.optional_number("latency_s", 0, 1e3, "a time in seconds in [0, 1000], or empty");
    m.source = c.cell("source");
    out.rows.push_back(std::move(m));
  }
  if (!header) throw ConfigError(file, fmt::format("no header line \"{}\"", MEASUREMENT_CSV_HEADER));
  return out;
}

std::string op_from_name(const std::string& file) {
  const std::string base = std::filesystem::path(file).filename().string();
  for (const auto& [pattern, op] : {std::pair{"all_reduce", "allreduce"}, std::pair{"allreduce", "allreduce"},
                                    std::pair{"all_gather", "allgather"}, std::pair{"allgather", "allgather"},
                                    std::pair{"reduce_scatter", "reduce_scatter"}, std::pair{"broadcast", "broadcast"}})
    if (base.find(pattern) != std::string::npos) return op;
  return {};
}

MeasurementFile read_nccl_tests(const std::string& file, std::istream& in, const ReadOptions& options) {
  MeasurementFile out{"nccl-tests", {}};
  std::string op = options.op.empty() ? op_from_name(file) : options.op;
  if (op.empty())
    throw ConfigError(file, "nccl-tests output does not name its operation; give --op (allreduce, allgather, "
                            "broadcast or reduce_scatter) or keep the test's name in the file name "
                            "(e.g. all_reduce_perf.txt)");
  check_op(op, file);
  int ranks = 0, repeats = 0;
  std::vector<std::string> columns;  // the column header's names, "#" removed
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string text = trim(line);
    if (text.empty()) continue;
    const std::string where = fmt::format("{}:{}", file, number);
    if (text[0] == '#') {
      const auto words = split_words(text.substr(1));
      if (words.size() >= 2 && words[0] == "Rank") ++ranks;
      if (words.size() >= 2 && words[0] == "nThread")
        for (std::size_t i = 0; i + 1 < words.size(); ++i)
          if (words[i] == "iters:" && (i == 0 || (words[i - 1] != "warmup" && words[i - 1] != "agg")))
            repeats = static_cast<int>(to_double(words[i + 1]).value_or(0));
      if (columns.empty() && std::find(words.begin(), words.end(), "size") != words.end() &&
          std::find(words.begin(), words.end(), "time") != words.end())
        columns = words;
      continue;
    }
    if (text.find("NCCL INFO") != std::string::npos || text.find("NCCL WARN") != std::string::npos) continue;
    if (columns.empty())
      throw ConfigError(where, "a data row before nccl-tests' column header (\"#  size  count ... time ...\")");
    const auto words = split_words(text);
    const auto time_at = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), "time") - columns.begin());
    if (words.size() <= time_at)
      throw ConfigError(where, fmt::format("expected at least {} columns ({}), got {}", time_at + 1,
                                           fmt::join(columns.begin(), columns.begin() + time_at + 1, " "), words.size()));
    Measurement m;
    m.line = number;
    m.op = op;
    m.algorithm = "library";
    m.backend = "nccl";
    m.source = "nccl-tests:" + std::filesystem::path(file).filename().string();
    m.repeats = repeats;
    const auto size = to_double(words[0]);
    if (!size || *size < 1 || *size > 1e15)
      throw ConfigError(where, fmt::format("size: expected a size in bytes in [1, 1e15], got \"{}\"", shown(words[0])));
    const auto us = to_double(words[time_at]);
    if (!us || *us <= 0 || *us > 1e12)
      throw ConfigError(where, fmt::format("time: expected a time in microseconds > 0, got \"{}\"", shown(words[time_at])));
    m.bytes = *size;
    m.seconds = *us * 1e-6;
    out.rows.push_back(std::move(m));
  }
  if (ranks < 1) throw ConfigError(file, "nccl-tests output without \"#  Rank N ...\" lines: the number of ranks is unknown");
  for (auto& m : out.rows) m.ranks = ranks;
  return out;
}

}  // namespace

MeasurementFile read_measurements(const std::string& file, const ReadOptions& options) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file, "cannot open the measurement file");
  std::string line, head;
  bool nccl = false;
  for (int seen = 0; seen < 64 && std::getline(in, line);) {
    const std::string text = trim(line);
    if (text.empty()) continue;
    if (seen++ == 0) head = text;
    if (text.rfind("# nThread", 0) == 0) nccl = true;
  }
  in.clear();
  in.seekg(0);
  if (head.rfind("op,", 0) == 0 || head.rfind("# command", 0) == 0) return read_csv(file, in);
  if (nccl) return read_nccl_tests(file, in, options);
  throw ConfigError(file, fmt::format("neither the measurement CSV (header \"{}\") nor nccl-tests output (a line "
                                      "\"# nThread ...\"); the first line is \"{}\"",
                                      MEASUREMENT_CSV_HEADER, shown(head)));
}

}  // namespace ddlsim::analysis
