// ddlsim: `ddlsim list` (app/list_command.hpp).
#include "app/list_command.hpp"

#include "models/collective.hpp"
#include "models/compressor.hpp"
#include "models/logical_graph.hpp"
#include "models/software_cost.hpp"
#include "models/sync_model.hpp"
#include "models/units.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"
#include "scenario/scenario.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sstream>
#include <utility>
#include <vector>

namespace ddlsim::sim {
namespace {

constexpr int NAME_WIDTH = 22;

void section(const std::string& title, const std::string& where) { fmt::print("{}: ({})\n", title, where); }
void entry(const std::string& name, const std::string& description) {
  fmt::print("  {:<{}} {}\n", name, NAME_WIDTH, description);
}

template <class Interface>
void list_registry(const std::string& title, const std::string& where) {
  section(title, where);
  for (const auto* e : Registry<Interface>::instance().entries()) entry(e->name, e->description);
}

/// A software preset's values, as network.software sets them (docs/scenario.md, "Software costs").
std::string describe(const models::SoftwareCost& c) {
  if (!c.protocols.empty()) {
    std::vector<std::string> names;
    for (const auto& p : c.protocols) names.push_back(p->preset);
    return fmt::format("per collective call, the protocol of least call cost + closed form among {} (NCCL's tuner); "
                       "point to point as {}",
                       fmt::join(names, ", "), c.protocols.back()->preset);
  }
  if (c.ideal() && !c.call_cost_s) return "alpha + bytes x beta exactly: no overheads, headers or handshakes";
  std::vector<std::string> parts;
  if (c.send_overhead_s > 0 || c.recv_overhead_s > 0)
    parts.push_back(fmt::format("overhead {} send, {} receive per step", units::format_time(c.send_overhead_s),
                                units::format_time(c.recv_overhead_s)));
  if (c.protocol_efficiency < 1) parts.push_back(fmt::format("protocol efficiency {:.4g}", c.protocol_efficiency));
  if (c.rendezvous == models::Rendezvous::MESSAGE)
    parts.push_back(fmt::format("handshake per message above {}", units::format_bytes(c.eager_limit_bytes)));
  if (c.rendezvous == models::Rendezvous::SEGMENT)
    parts.push_back(fmt::format("handshake per {} segment, {} in flight", units::format_bytes(c.segment_bytes),
                                c.segments_in_flight));
  if (c.rendezvous == models::Rendezvous::CREDIT)
    parts.push_back(fmt::format("{} credits of {} posted up front, no handshake", c.segments_in_flight,
                                units::format_bytes(c.segment_bytes)));
  if (c.call_cost_s) parts.push_back(fmt::format("call cost {}", units::format_time(*c.call_cost_s)));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

void list_choices(const std::string& title, const std::string& where,
                  const std::vector<std::pair<std::string, std::string>>& choices) {
  section(title, where);
  for (const auto& [name, description] : choices) entry(name, description);
}

}  // namespace

void print_lists() {
  list_registry<platforms::TopologyBuilder>("topologies", "platform.topology");
  list_registry<models::SyncModel>("sync models", "training.sync.name");
  list_registry<models::Collective>("collectives", "training.collective.name");
  list_registry<models::Compressor>("compressors", "training.compressor.name");

  section("software presets", "network.software, or its \"preset\"; ddlsim collectives --software");
  std::istringstream names(models::software_preset_names());
  for (std::string name; std::getline(names, name, ',');) {
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    entry(name, describe(*models::software_preset(name)));
  }
  list_choices("bucketing policies", "training.bucketing.policy",
               {{to_string(BucketingPolicy::SIZE), "buckets of up to bucket_bytes in backward order (the default)"},
                {to_string(BucketingPolicy::MGWFBP), "MG-WFBP: merges buckets when one all-reduce is cheaper than two"},
                {to_string(BucketingPolicy::DDP), "PyTorch DDP's rule: a first bucket of first_bucket_bytes, then bucket_bytes"},
                {to_string(BucketingPolicy::HOROVOD), "Horovod's tensor fusion: per cycle_time, up to fusion_threshold_bytes"}});
  // models/logical_graph.hpp defines each; every kind it reads has a line here.
  const std::vector<std::pair<std::string, std::string>> graphs{
      {"ring", "neighbours r - 1 and r + 1 (the default)"},
      {"torus2d", "rows x columns with wrap-around: up, down, left, right (param rows)"},
      {"exponential", "out-peers r + 2^k for k < ceil(log2 N)"},
      {"one_peer_exponential", "one out-peer per round: r + 2^(round mod ceil(log2 N))"},
      {"random_matching", "a random matching per round, seeded by (seed, round)"},
      {"custom", "the undirected edge list in param edges"}};
  std::vector<std::pair<std::string, std::string>> listed;
  for (const auto& kind : models::logical_graph_kinds()) {
    const auto it = std::find_if(graphs.begin(), graphs.end(), [&](const auto& g) { return g.first == kind; });
    listed.emplace_back(kind, it != graphs.end() ? it->second : std::string("(docs/scenario.md)"));
  }
  list_choices("logical graphs", "training.sync.params.graph of gossip", listed);
  list_choices("routings", "platform.routing; ddlsim collectives --routing",
               {{"shortest", "SimGrid's Dijkstra tie-breaking among the fewest-hop paths (the default but on fat_tree)"},
                {"ecmp", "a seeded hash of (seed, source, destination, switch) at every tie (the default on fat_tree)"},
                {"dmodk", "destination-mod-k: the destination's digits in the radix of the ties"}});
  list_choices("network models", "network.model",
               {{to_string(NetworkModel::IDEAL), "max-min bandwidth sharing, no TCP window or cross traffic (the default)"},
                {to_string(NetworkModel::TCP), "SimGrid's LV08 TCP model (flow fidelity)"},
                {to_string(NetworkModel::CALIBRATED), "ideal with latency_factor and bandwidth_factor (ddlsim calibrate)"}});
  list_choices("fidelities", "network.fidelity",
               {{to_string(Fidelity::FLOW), "every message a SimGrid flow (the default)"},
                {to_string(Fidelity::ANALYTIC), "closed-form collectives on an alpha-beta network"},
                {to_string(Fidelity::PACKET), "every segment through ns-3's TCP and queues (network.packet)"}});
  list_choices("collective granularities", "network.collective_granularity",
               {{to_string(Granularity::STEPWISE), "every step of a schedule its own flows (the default)"},
                {to_string(Granularity::PIPELINED), "consecutive steps with the same peers merged into one flow"}});
  list_choices("straggler noise", "training.stragglers.distribution",
               {{"none", "no noise (the default)"}, {"normal", "1 + sigma N(0, 1), at least 0"},
                {"lognormal", "exp(sigma N(0, 1) - sigma^2 / 2)"}, {"exponential", "1 + Exp(mean sigma)"}});
  fmt::print("files a scenario names (profiles, training traces, compression-cost tables, gain models, calibrations): "
             "scenarios/ (docs/scenario.md)\n");
}

}  // namespace ddlsim::sim
