// ddlsim: measured collective timings, the input of `ddlsim calibrate` (docs/validation.md).
//
// Two formats are read, told apart by their first line:
//
//   * the project's measurement CSV (tools/measure_collectives.py), header exactly
//       op,algorithm,ranks,servers,bytes,seconds,repeats,backend,bandwidth_bps,latency_s,source
//     with `#` comment lines;
//   * nccl-tests' text output (all_reduce_perf, all_gather_perf, broadcast_perf,
//     reduce_scatter_perf): `#` header lines (`# nThread ...`, one `#  Rank N ...` line per rank,
//     the column header with `size ... time ...`) and one row per size; the out-of-place time (us)
//     is taken. The output names no operation: `op` comes from the caller (--op) or the file name.
//
// Errors are ConfigErrors whose path is "FILE:LINE" (or "FILE") and whose message names the column.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::analysis {

struct Measurement {
  std::string op;         // allreduce, allgather, broadcast, reduce_scatter
  std::string algorithm;  // a ddlsim collective, or "library" (the communication library's own)
  int ranks = 0;          // workers N
  int servers = 0;        // parameter-server ranks S
  double bytes = 0;       // M as ddlsim counts it
  double seconds = 0;     // the measured (median) time of one call
  int repeats = 0;        // 0 when unknown
  std::string backend;    // gloo, nccl, ...
  std::optional<double> bandwidth_Bps;  // the link rate per direction, when the file gives it
  std::optional<double> latency_s;      // the one-way host-to-host latency, when the file gives it
  std::string source;
  int line = 0;           // 1-based line in the file (for messages)
};

struct MeasurementFile {
  std::string format;  // "ddlsim-csv" or "nccl-tests"
  std::vector<Measurement> rows;
};

struct ReadOptions {
  /// nccl-tests only: the operation (empty: from the file name, e.g. all_reduce_perf.txt).
  std::string op;
};

/// The header of the project's CSV, as one line.
extern const char* const MEASUREMENT_CSV_HEADER;
/// The operations a measurement may name.
const std::vector<std::string>& measurement_ops();

MeasurementFile read_measurements(const std::string& file, const ReadOptions& options = {});

}  // namespace ddlsim::analysis
