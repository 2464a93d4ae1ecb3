#include "analysis/run_outputs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <string_view>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::analysis {
namespace {

std::string csv_header(bool events) {
  return std::string("worker,iteration,start_s,end_s,duration_s,compute_s,exposed_comm_s,comm_busy_s,straggler_wait_s,"
                     "staleness_wait_s,encode_decode_s,cr,collective,exploring") +
         (events ? ",events_sent,events_saved\n" : "\n");
}

/// Chrome trace format ("Trace Event Format"): complete events in microseconds, one process per
/// worker (threads: compute, communication) and per server. The metadata events name them.
nlohmann::json metadata_events(const sim::Scenario& sc) {
  nlohmann::json events = nlohmann::json::array();
  const int shown = std::min(sc.output.timeline_workers, sc.platform.workers);
  auto meta = [&events](int pid, int tid, const char* what, const std::string& name) {
    events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", what}, {"args", {{"name", name}}}});
  };
  for (int w = 0; w < shown; ++w) {
    meta(w, 0, "process_name", fmt::format("worker {}", w));
    meta(w, 0, "thread_name", "compute");
    meta(w, 1, "thread_name", "communication");
    for (int k = 2; k <= sc.training.bucketing.max_inflight; ++k)  // concurrent bucket collectives
      meta(w, k, "thread_name", fmt::format("communication {}", k));
  }
  if (sc.training.sync_model->traits().uses_servers)
    for (int s = 0; s < sc.platform.parameter_servers; ++s) {
      meta(sc.platform.workers + s, 0, "process_name", fmt::format("parameter server {}", s));
      meta(sc.platform.workers + s, 0, "thread_name", "update");
    }
  return events;
}

/// `text` as a JSON string (quotes, backslashes and control characters escaped).
void append_json_string(fmt::memory_buffer& out, const std::string& text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"': out.append(std::string_view("\\\"")); break;
      case '\\': out.append(std::string_view("\\\\")); break;
      case '\n': out.append(std::string_view("\\n")); break;
      case '\t': out.append(std::string_view("\\t")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
        else out.push_back(c);
    }
  }
  out.push_back('"');
}

/// `value` as JSON: the shortest representation that reads back exactly, with ".0" on integral
/// values (as nlohmann's dump writes them); null when not finite.
void append_json_number(fmt::memory_buffer& out, double value) {
  if (!std::isfinite(value)) return out.append(std::string_view("null"));
  const auto start = out.size();
  fmt::format_to(std::back_inserter(out), "{}", value);
  const std::string_view text(out.data() + start, out.size() - start);
  if (text.find_first_of(".eEn") == std::string_view::npos) out.append(std::string_view(".0"));
}

}  // namespace

std::string links_csv(const sim::SimulationResult& result) {
  std::string out = "link,bandwidth_Bps,bytes,utilization\n";
  for (const auto& l : result.links)
    out += fmt::format("{},{:.6g},{:.6f},{:.6f}\n", l.name, l.bandwidth_Bps, l.bytes, l.utilization);
  return out;
}

RunOutputs::RunOutputs(const sim::Scenario& scenario, OutputDir& dir)
    : scenario_(scenario), dir_(dir), events_columns_(!scenario.training.sync_model->events_unit().empty()) {
  if (scenario.training.convergence)
    convergence_ = std::make_unique<ConvergenceOutputs>(scenario, [this]() -> std::ofstream& {
      if (!convergence_csv_.is_open()) {
        const auto file = dir_.staged("convergence.csv");
        convergence_csv_.open(file, std::ios::binary | std::ios::trunc);
        if (!convergence_csv_) throw std::runtime_error(fmt::format("cannot write \"{}\"", file.string()));
      }
      return convergence_csv_;
    });
}

std::ofstream& RunOutputs::open(std::ofstream& out, const std::string& name) {
  if (out.is_open()) return out;
  const auto file = dir_.staged(name);
  out.open(file, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(fmt::format("cannot write \"{}\"", file.string()));
  if (&out == &csv_) {
    out << csv_header(events_columns_);
  } else {
    // {"displayTimeUnit": ..., "traceEvents": [...]}: keys in nlohmann's (sorted) order, the
    // events streamed into the array.
    out << R"({"displayTimeUnit":"ms","traceEvents":[)";
    for (const auto& e : metadata_events(scenario_)) {
      out << (first_event_ ? "" : ",") << e.dump();
      first_event_ = false;
    }
  }
  return out;
}

namespace {

/// `value` as fmt's "{:.9f}" writes it, then a comma.
void append_fixed9(fmt::memory_buffer& out, double value) {
  char buf[128];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, 9);
  if (ec == std::errc{}) out.append(buf, end);
  else fmt::format_to(std::back_inserter(out), "{:.9f}", value);  // beyond 1e118: never a time here
  out.push_back(',');
}

}  // namespace

void RunOutputs::append_row_rest(fmt::memory_buffer& text, const sim::IterationRecord& r, const std::string& tail) const {
  for (const double v : {r.start_s, r.end_s, r.end_s - r.start_s, r.compute_s, r.exposed_comm_s, r.comm_busy_s,
                         r.straggler_wait_s, r.staleness_wait_s, r.codec_s})
    append_fixed9(text, v);
  text.append(tail);
  if (events_columns_) {
    if (r.events_sent >= 0) fmt::format_to(std::back_inserter(text), ",{},{}", r.events_sent, r.events_possible - r.events_sent);
    else text.append(std::string_view(",,"));
  }
  text.push_back('\n');
}

void RunOutputs::iteration(int iteration, const std::vector<sim::IterationRecord>& workers,
                           const sim::IterationCompression& c) {
  if (convergence_) convergence_->iteration(iteration, last_end_s(workers), c);
  if (!scenario_.output.iterations_csv) return;
  auto& out = open(csv_, "iterations.csv");
  // One buffer per iteration, times through std::to_chars (correctly rounded like fmt's {:.9f}, and
  // several times faster: a million rows is a second otherwise); the iteration's own columns once.
  const std::string tail = fmt::format("{:.6g},{},{}", c.cr, c.collective, c.exploring ? 1 : 0);
  fmt::memory_buffer text;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    fmt::format_to(std::back_inserter(text), "{},{},", w, iteration);
    append_row_rest(text, workers[w], tail);
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void RunOutputs::iteration_by_class(int iteration, const std::vector<sim::IterationRecord>& records,
                                    const std::vector<int>& slot_of, const sim::IterationCompression& c) {
  if (convergence_) convergence_->iteration(iteration, last_end_s(records), c);
  if (!scenario_.output.iterations_csv) return;
  auto& out = open(csv_, "iterations.csv");
  // Each simulated worker's columns after "worker,iteration," formatted once, then one row per worker.
  const std::string tail = fmt::format("{:.6g},{},{}", c.cr, c.collective, c.exploring ? 1 : 0);
  std::vector<std::string> rest;
  rest.reserve(records.size());
  for (const auto& r : records) {
    fmt::memory_buffer one;
    append_row_rest(one, r, tail);
    rest.emplace_back(one.data(), one.size());
  }
  const std::string prefix = fmt::format(",{},", iteration);
  fmt::memory_buffer text;
  char number[16];
  for (std::size_t w = 0; w < slot_of.size(); ++w) {
    const auto end = std::to_chars(number, number + sizeof number, w).ptr;
    text.append(number, end);
    text.append(prefix);
    text.append(rest[static_cast<std::size_t>(slot_of[w])]);
    if (text.size() >= (1U << 20)) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void RunOutputs::trace(const sim::TraceEvent& e) {
  if (!scenario_.output.timeline) return;
  auto& out = open(timeline_, "timeline.json");
  // One complete event, keys in the order of the metadata events (sorted), written directly:
  // a timeline of millions of events is written at disk speed.
  fmt::memory_buffer text;
  text.append(std::string_view(first_event_ ? "{\"cat\":" : ",{\"cat\":"));
  append_json_string(text, e.category);
  text.append(std::string_view(",\"dur\":"));
  append_json_number(text, e.duration_s * 1e6);
  text.append(std::string_view(",\"name\":"));
  append_json_string(text, e.name);
  fmt::format_to(std::back_inserter(text), R"(,"ph":"X","pid":{},"tid":{},"ts":)", e.pid, e.tid);
  append_json_number(text, e.start_s * 1e6);
  text.push_back('}');
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  first_event_ = false;
}

void RunOutputs::close(std::ofstream& out, const std::string& name) {
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("cannot write \"{}\"", dir_.staged(name).string()));
  out.close();
  written_.push_back(name);
}

void RunOutputs::write_file(const std::string& name, const std::string& content) {
  const auto file = dir_.staged(name);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.flush()) throw std::runtime_error(fmt::format("cannot write \"{}\"", file.string()));
  written_.push_back(name);
}

void RunOutputs::finish(const sim::SimulationResult& result, const nlohmann::json& summary) {
  written_.clear();
  write_file("summary.json", summary.dump(2) + "\n");
  if (scenario_.output.iterations_csv) close(open(csv_, "iterations.csv"), "iterations.csv");
  if (convergence_csv_.is_open()) close(convergence_csv_, "convergence.csv");
  if (result.links_omitted.empty()) write_file("links.csv", links_csv(result));
  if (scenario_.output.timeline) {
    open(timeline_, "timeline.json") << "]}\n";
    close(timeline_, "timeline.json");
  }
  dir_.commit(written_);
}

}  // namespace ddlsim::analysis
