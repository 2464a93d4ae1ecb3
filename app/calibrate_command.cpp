// ddlsim: `ddlsim calibrate` (app/calibrate_command.hpp).
#include "app/calibrate_command.hpp"

#include "analysis/measurements.hpp"
#include "models/collective.hpp"
#include "models/error.hpp"
#include "models/json_reader.hpp"
#include "models/units.hpp"
#include "app/run_command.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace ddlsim::sim {

CalibrateCommand::CalibrateCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "calibrate", "fit latency/bandwidth factors and software costs to measured collective timings");
  command_->add_option("measurements", file_,
                       "the measurement CSV (tools/measure_collectives.py) or nccl-tests output")
      ->required();
  out_option_ = command_->add_option("--out,-o", out_, "write the calibration snippet here (a scenario's network.calibration)");
  command_->add_option("--holdout", holdout_,
                       "hold rows out of the fit and score them: COLUMN=V1,V2 (op, algorithm, ranks, servers, bytes, "
                       "backend, bandwidth_bps, latency_s, source; units allowed: bandwidth_bps=200Mbps) or every=K; "
                       "repeatable (a row matching any is held out)")
      ->expected(1)
      ->take_all();
  command_->add_option("--select", select_,
                       "use only the rows matching COLUMN=V1,V2 (columns as for --holdout); repeatable (a row must "
                       "match every one); calibrate one algorithm at a time: --select algorithm=ring")
      ->expected(1)
      ->take_all();
  command_->add_option("--fit", fit_,
                       "the parameters to fit (default: latency_factor, bandwidth_factor, overhead, call_cost); segments "
                       "(the handshake's) only when named, and never with latency_factor: both price latency")
      ->delimiter(',');
  command_->add_option("--software", software_,
                       "the software preset the fit starts from and whose protocol efficiency it keeps (ideal, gloo, "
                       "mpi, nccl_simple, nccl_ll, nccl_ll128; default: nccl_simple for nccl rows, else gloo)");
  command_->add_option("--op", op_,
                       "nccl-tests output: the operation (allreduce, allgather, broadcast, reduce_scatter; default: "
                       "from the file name, e.g. all_reduce_perf.txt)");
  command_->add_option("--bandwidth,-b", bandwidth_,
                       "the link rate of rows that give none (nccl-tests, torchrun runs): 100Gbps, 12.5GBps");
  command_->add_option("--latency,-l", latency_, "the one-way host-to-host latency of rows that give none: 5us");
  command_->add_option("--library", library_,
                       "which ddlsim collective models the library's own, per op (default: allreduce=gloo_ring for gloo "
                       "rows and ring for others, allgather=ring_allgather, broadcast=binomial_broadcast, "
                       "reduce_scatter=ring_reduce_scatter)")
      ->delimiter(',');
  command_->add_flag("--rows", rows_, "also print every row's measured and predicted time");
  command_->add_option("--folds", folds_,
                       "k-fold cross-validation of the fitted rows, scored beside the base preset (0: none); --out "
                       "refuses a calibration that predicts unseen rows worse than the preset")
      ->default_val(5);
  command_->add_flag("--force", force_, "write the snippet even when it scores worse out of sample than the preset");
}

void CalibrateCommand::check_out() const {
  check_out_option(out_option_, out_, "no snippet is written");
  if (out_.empty()) return;
  namespace fs = std::filesystem;
  const auto fail = [this](const std::string& why) {
    throw ConfigError("--out", fmt::format("\"{}\" {}", excerpt(out_), why));
  };
  std::error_code ec;
  const auto status = fs::status(out_, ec);
  if (fs::is_directory(status)) fail("is a directory; give the file to write the calibration snippet to");
  if (fs::exists(status) && fs::equivalent(out_, file_, ec))
    fail("is the measurements file; writing the snippet there would overwrite the measurements: give another file");
  if (fs::exists(status) && !fs::is_regular_file(status)) fail("is not a regular file");
  // The snippet is written beside it as FILE.tmp, then renamed: the folder must take a new file.
  const std::string temporary = out_ + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0 && errno != EEXIST) fail(fmt::format("cannot be written: {}", std::strerror(errno)));
  if (fd >= 0) {
    ::close(fd);
    ::unlink(temporary.c_str());
  }
}

int CalibrateCommand::run(const Invocation& invocation) const {
  const auto& argv = invocation.argv;

  check_out();  // before anything is fitted or printed
  analysis::CalibrationOptions options;
  options.base_software = software_;
  if (!fit_.empty()) options.fit = std::set<std::string>(fit_.begin(), fit_.end());
  options.holdout = holdout_;
  options.select = select_;
  options.folds = folds_;
  if (!bandwidth_.empty()) options.bandwidth_Bps = units::cli_bandwidth_Bps(bandwidth_, "--bandwidth");
  if (!latency_.empty()) options.latency_s = units::cli_latency_s(latency_, "--latency");
  for (const auto& pair : library_) {
    const auto eq = pair.find('=');
    const std::string op = pair.substr(0, eq);
    const auto& ops = analysis::measurement_ops();
    if (eq == std::string::npos || std::find(ops.begin(), ops.end(), op) == ops.end())
      throw ConfigError("--library", fmt::format("expected OP=ALGORITHM with OP one of {}, got \"{}\"", join_names(ops), pair));
    models::CollectiveRegistry::instance().check_name(pair.substr(eq + 1), "--library", "collective");
    options.library[op] = pair.substr(eq + 1);
  }
  if (!op_.empty()) {
    const auto& ops = analysis::measurement_ops();
    if (std::find(ops.begin(), ops.end(), op_) == ops.end())
      throw ConfigError("--op", fmt::format("unknown operation \"{}\"; valid are: {}", op_, join_names(ops)));
  }
  const auto file = analysis::read_measurements(file_, analysis::ReadOptions{op_});
  const auto result = analysis::calibrate(file, file_, options);
  if (out_.empty()) {
    fmt::print("{}", analysis::format_calibration(result, file_, rows_));
    return 0;
  }
  if (const auto& cv = result.cross_validation; cv.worse_than_base() && !force_)
    throw ConfigError("--out", fmt::format("not written: out of sample ({}-fold) the calibration's median error is "
                                           "{:.1f}%, the {} preset's {:.1f}% on the same rows; keep the preset, measure "
                                           "more rows, or --force",
                                           cv.folds, 100 * cv.calibrated.median_abs, result.base_preset,
                                           100 * cv.base.median_abs));
  std::string command = "ddlsim";
  for (std::size_t i = 1; i < argv.size(); ++i) command += " " + argv[i];
  const std::string text = analysis::calibration_snippet(result, file_, command).dump(2) + "\n";
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string temporary = out_ + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush())
      throw ConfigError("--out", fmt::format("cannot write \"{}\"", out_));
  }
  fs::rename(temporary, out_, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw ConfigError("--out", fmt::format("cannot write \"{}\"", out_));
  }
  // Printed once the snippet is in place: a refusal prints nothing before its one line.
  fmt::print("{}", analysis::format_calibration(result, file_, rows_));
  fmt::print("wrote {}\n", out_);
  return 0;
}

}  // namespace ddlsim::sim
