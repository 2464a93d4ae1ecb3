// ddlsim: flows sharing link halves by weighted max-min, as SimGrid's CM02 shares them, in
// O(log n) per flow event where the flows crowd at a few hubs (parameter servers' NICs).
//
// SimGrid's LMM re-solves the sharing over every flow at every flow event: with N workers pushing
// to S servers, a server's NIC carries N flows and a bucket's 2 N S events cost O(N S) each, so a
// run grows as N^2 (docs/performance.md). Here every flow crosses exactly one hub (the server's
// link half) and any number of local links (the worker's). CM02 gives flow f the rate
// lambda / p_f at the level lambda where its most constrained link saturates (p_f: the route's
// latency, its sharing penalty; SimGrid src/kernel/lmm/maxmin.cpp), capped by its bound. While no
// local link and no bound binds, every flow at hub h runs at L_h / p_f with L_h = C_h / sum(1/p)
// over h's flows: then each flow's progress is a fixed share of the hub's virtual time
// V_h = integral of L_h dt, and a flow of u units (rate factor phi) ends when V_h reaches its
// start's V_h + u p / phi: one heap per hub, O(log n) per event ("implicit" sharing). Whether a
// local link or a bound could bind is checked in O(log n) after every event from sums kept per
// link; when one could, the sharing is solved over every flow by progressive filling (the LMM's
// own algorithm) until it cannot ("explicit" sharing, O(n log n) per event). Both give the same
// rates: the unique weighted max-min allocation.
//
// Time and rates are in the caller's units (SimGrid units per second here); a flow is started
// once its latency is paid (SimGrid's flows take no bandwidth before).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <vector>

namespace ddlsim::sim {

class FluidLinks {
 public:
  /// A link half of `capacity` units per second; `hub`: flows are grouped at it (one per flow).
  int add_link(double capacity, bool hub);
  [[nodiscard]] std::size_t links() const { return links_.size(); }
  [[nodiscard]] bool is_hub(int link) const { return links_.at(static_cast<std::size_t>(link)).hub; }

  struct Flow {
    int hub = -1;              // the hub link its route crosses
    std::vector<int> locals;   // the route's other links
    double units = 0;          // what it carries
    double bound = std::numeric_limits<double>::infinity();  // its value's cap (CM02's user bound)
    double penalty = 1;        // CM02's sharing penalty: the route's latency (1 without latency)
    double factor = 1;         // CM02's rate factor: it progresses at value x factor
  };
  /// Starts `flow` at `now` (no earlier than the last advance, but for rounding); returns its id,
  /// unique among running flows (an ended flow's id is given again: memory stays with the flows
  /// running, not with every flow of the run).
  std::int64_t start(const Flow& flow, double now);
  /// When the next flow ends (+inf when none runs). The sharing is settled here, once for every
  /// flow started at the same instant (a burst of starts is one event).
  [[nodiscard]] double next_completion();
  /// Advances to `now` (<= next_completion()): the flows that end then, in the order of their ids.
  std::vector<std::int64_t> advance(double now);
  /// Flows running.
  [[nodiscard]] std::size_t running() const { return running_; }

  /// What the sharing cost: events, events solved explicitly, switches between the two ways.
  struct Stats {
    std::int64_t events = 0;
    std::int64_t explicit_events = 0;
    std::int64_t switches = 0;
  };
  [[nodiscard]] const Stats& stats() const { return stats_; }
  /// Each running flow's value now (units per second before its factor), by id: for tests.
  [[nodiscard]] std::map<std::int64_t, double> rates();

 private:
  struct FlowState {
    Flow spec;
    bool running = false;
    std::size_t slot = 0;  // its place in running_ids_
    double vend = 0;       // implicit: the hub's virtual time at which it ends
    double remaining = 0;  // explicit: units left
    double value = 0;      // explicit: its value
    double ends_at = 0;    // explicit: when it ends at that value
  };
  struct Link {
    double capacity = 0;
    bool hub = false;
    double inv_penalties = 0;  // sum of 1/p of its running flows
    std::int64_t flows = 0;
    // hubs only
    double virtual_time = 0;   // V_h at `since`
    double since = 0;
    double level = 0;          // L_h
    bool in_levels = false;    // level is in hub_levels_
    double ratio = 0;          // locals: C / sum(1/p), in local_ratios_ when in_ratios
    bool in_ratios = false;
    bool violating = false;    // hubs: the level exceeds a flow's bound level
    std::multiset<double> bound_levels;  // bound x p of its running flows with a bound
    using Entry = std::pair<double, std::int64_t>;  // (vend, id)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ends;
    double ends_at = std::numeric_limits<double>::infinity();  // when its first flow ends
  };

  void progress_to(double t);                          // explicit: every flow's remaining at t
  void touch_hub(int h, double now);                   // brings V_h to now
  void reprice_hub(int h);                             // level, predicted end, bound check
  void reprice_local(int l);                           // its ratio in the local ratios' multiset
  void add_to_links(const FlowState& f, double sign);  // the links' sums of 1/p and the bounds
  [[nodiscard]] bool implicit_exact() const;
  void settle();                                       // picks the way to share after an event
  void to_explicit();
  void to_implicit();
  void solve_explicit();
  [[nodiscard]] double hub_flow_end(int h, double vend) const;

  std::vector<Link> links_;
  std::vector<FlowState> flows_;
  std::vector<std::int64_t> running_ids_;
  std::vector<std::int64_t> free_ids_;  // ids of ended flows, given again (last ended first)
  std::size_t running_ = 0;
  bool explicit_ = false;
  bool unsettled_ = false;  // flows started since the sharing was last settled
  double now_ = 0;
  std::multiset<double> hub_levels_;       // L_h of hubs with flows
  std::multiset<double> local_ratios_;     // C / sum(1/p) of local links with flows
  std::set<std::pair<double, int>> hub_ends_;  // (predicted end, hub) in implicit sharing
  std::int64_t bound_violations_ = 0;      // hubs whose level exceeds a flow's bound level
  double explicit_next_ = std::numeric_limits<double>::infinity();
  Stats stats_;
  // solve_explicit's scratch, per link and per flow, kept between solves (only what a solve
  // touches is reset)
  std::vector<double> left_, weight_;
  std::vector<std::int64_t> free_flows_, version_;
  std::vector<std::vector<std::int64_t>> on_;
  std::vector<int> touched_;
  std::vector<char> frozen_;
};

}  // namespace ddlsim::sim
