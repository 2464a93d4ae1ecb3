// ddlsim: the open per-iteration records -- an iteration is completed once every worker has
// ended it: its straggler and staleness waits, the totals, the sink -- and the link loads
// derived once the run is over.
#include "engine/run_state.hpp"

#include <algorithm>
#include <boost/graph/graph_traits.hpp>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::sim::detail {
namespace {

/// Per bucket, the wait of each worker's all-reduce for the last worker's arrival; the holds of
/// its pulls by a staleness bound (the longest over the servers, summed over buckets).
void fill_waits(std::vector<IterationRecord>& rows) {
  for (auto& r : rows)
    for (double h : r.held) r.staleness_wait_s += h;
  const std::size_t buckets = rows.front().arrivals.size();
  for (std::size_t b = 0; b < buckets; ++b) {
    double last = -1;
    for (const auto& r : rows) last = std::max(last, r.arrivals[b]);
    for (auto& r : rows)
      if (r.arrivals[b] >= 0) r.straggler_wait_s += last - r.arrivals[b];
  }
}

/// What iteration `it`'s gradients ran: the fraction sent, the collective(s), adaptive compression's choice.
IterationCompression compression_row(RunState& ctx, int it) {
  IterationCompression row;
  row.cr = ctx.static_cr;
  const auto i = static_cast<std::size_t>(it);
  if (ctx.adaptive && i < ctx.adaptive->decisions.size()) {
    row.variant = ctx.adaptive->decisions[i].candidate;
    row.cr = ctx.variant_cr.at(static_cast<std::size_t>(row.variant));
    row.exploring = ctx.adaptive->decisions[i].exploring;
  }
  auto& open = ctx.records.collectives;
  if (auto found = open.find(it); found != open.end()) {
    row.collective = std::move(found->second);
    open.erase(found);
  }
  if (row.collective.empty()) row.collective = "none";
  return row;
}

/// The oldest open iteration, which every worker has ended: out of the open records.
void complete_first(RunState& ctx) {
  auto& open = ctx.records;
  const int it = open.first;
  auto& rows = open.completed;
  rows.clear();
  rows.reserve(open.by_worker.size());
  for (auto& worker : open.by_worker) {
    rows.push_back(std::move(worker.front()));
    worker.pop_front();
  }
  open.ended.pop_front();
  ++open.first;
  // Per slot; with classes of identical workers, worker w's record is rows[slot_of[w]], and the
  // waits come out the same (the latest arrival of a bucket is a simulated worker's).
  fill_waits(rows);
  const IterationCompression row = compression_row(ctx, it);
  ctx.iteration_ab.erase(it);
  if (ctx.classes) {
    const auto& slot_of = ctx.classes->slot_of();
    ctx.result.totals.add(rows, slot_of, row);
    if (ctx.options->sink != nullptr) ctx.options->sink->iteration_by_class(it, rows, slot_of, row);
    else
      for (std::size_t w = 0; w < slot_of.size(); ++w)
        ctx.result.workers[w].iterations.push_back(rows[static_cast<std::size_t>(slot_of[w])]);
  } else {
    ctx.result.totals.add(rows, row);
    if (ctx.options->sink != nullptr) ctx.options->sink->iteration(it, rows, row);
    else
      for (std::size_t w = 0; w < rows.size(); ++w) ctx.result.workers[w].iterations.push_back(std::move(rows[w]));
  }
  if (ctx.options->sink == nullptr) ctx.result.iteration_compression.push_back(row);
  else
    for (auto& r : rows)
      for (auto* buffer : {&r.arrivals, &r.held})
        if (buffer->capacity() > 0) open.spare.push_back(std::move(*buffer));
  rows.clear();
  if (ctx.options->progress) ctx.options->progress(it + 1, ctx.plan.iterations, ctx.now_s());
}

}  // namespace

void RunState::trace(int pid, int tid, std::string name, std::string category, double start, double duration) {
  TraceEvent event{pid, tid, std::move(name), std::move(category), start, duration};
  if (options->sink != nullptr) options->sink->trace(event);
  else result.timeline.push_back(std::move(event));
}

IterationRecord& RunState::begin_record(int rank, int iteration) {
  auto& mine = records.by_worker.at(static_cast<std::size_t>(rank));
  if (iteration != records.first + static_cast<int>(mine.size()))
    throw std::logic_error(fmt::format("worker {} began iteration {} after iteration {}", rank, iteration,
                                       records.first + static_cast<int>(mine.size()) - 1));
  if (records.ended.size() < mine.size() + 1) records.ended.push_back(0);
  auto& rec = mine.emplace_back();
  if (!records.spare.empty()) {  // a completed record's buffer (its contents are the caller's to set)
    rec.arrivals = std::move(records.spare.back());
    records.spare.pop_back();
  }
  return rec;
}

IterationRecord& RunState::record(int rank, int iteration) {
  auto& mine = records.by_worker.at(static_cast<std::size_t>(rank));
  const int index = iteration - records.first;
  if (index < 0 || index >= static_cast<int>(mine.size()))
    throw std::logic_error(fmt::format("worker {}: the record of iteration {} is not open (open: {} to {})", rank,
                                       iteration, records.first, records.first + static_cast<int>(mine.size()) - 1));
  return mine[static_cast<std::size_t>(index)];
}

void RunState::end_record(int rank, int iteration) {
  (void)record(rank, iteration);  // open
  ++records.ended.at(static_cast<std::size_t>(iteration - records.first));
  const int workers = static_cast<int>(records.by_worker.size());
  bool completed = false;
  while (!records.ended.empty() && records.ended.front() == workers) {
    complete_first(*this);
    completed = true;
  }
  if (completed && records.first < plan.iterations && options->stop_requested && options->stop_requested())
    throw RunStopped{};
}

void check_records_complete(const RunState& ctx) {
  for (std::size_t w = 0; w < ctx.records.by_worker.size(); ++w)
    if (!ctx.records.by_worker[w].empty())
      throw std::logic_error(fmt::format("worker {} left {} iteration(s) open: not every worker ran iterations {} to {}",
                                         w, ctx.records.by_worker[w].size(), ctx.records.first,
                                         ctx.records.first + static_cast<int>(ctx.records.by_worker[w].size()) - 1));
}

void collect_links(SimulationResult& result, const platforms::Topology& topo, const LinkHalves* halves,
                   const std::vector<double>* analytic) {
  const auto& g = topo.graph;
  std::size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    // The emitter's UP half runs from the edge's source to its target (engine/s4u_emitter.hpp).
    const auto [from, to] = halves != nullptr ? halves->up[i] : std::pair(boost::source(e, g), boost::target(e, g));
    ++i;
    for (const bool up : {true, false}) {
      std::optional<double> counted = 0.0;  // nothing flows on the fiber lane
      if (halves != nullptr) counted = up ? halves->up_bytes[i - 1] : halves->down_bytes[i - 1];
      if (!counted) continue;
      LinkRecord rec;
      rec.name = up ? g[from].name + ">" + g[to].name : g[to].name + ">" + g[from].name;
      rec.bandwidth_Bps = g[e].bandwidth_Bps;
      rec.bytes = *counted;  // wire bytes, whatever the factors
      if (analytic != nullptr) rec.bytes += (*analytic)[2 * (i - 1) + (up ? 0 : 1)];
      rec.utilization = result.makespan_s > 0 ? rec.bytes / (rec.bandwidth_Bps * result.makespan_s) : 0;
      result.links.push_back(rec);
    }
  }
  std::sort(result.links.begin(), result.links.end(),
            [](const LinkRecord& a, const LinkRecord& b) { return a.name < b.name; });
}

}  // namespace ddlsim::sim::detail
