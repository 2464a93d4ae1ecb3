#include "models/software_cost.hpp"

#include "models/error.hpp"
#include "models/json_reader.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ddlsim::models {

SoftwareCost::Message SoftwareCost::message(double bytes, double alpha_s, double beta_s_per_byte) const {
  const double wire = beta_s_per_byte / protocol_efficiency;
  Message m{alpha_s, wire, wire};
  if (!handshakes(bytes)) return m;
  if (rendezvous == Rendezvous::CREDIT) {  // credits posted up front: no wait for the first k segments
    const double n = segment_bytes > 0 ? std::ceil(bytes / segment_bytes) : 1;
    if (n <= segments_in_flight) return m;
    const double s = bytes / n;
    const double p = std::max(s * wire, (2 * alpha_s + s * wire) / segments_in_flight);
    m.per_byte_s = (s * wire + (n - 1) * p) / bytes;  // the last segment leaves (n - 1) p after the first
    return m;
  }
  if (rendezvous == Rendezvous::MESSAGE || segment_bytes <= 0) {
    m.latency_s = 2 * alpha_s;  // the receiver's "ready" crosses the path first
    return m;
  }
  const double n = std::ceil(bytes / segment_bytes);
  const double s = bytes / n;
  const double p = std::max(s * wire, (2 * alpha_s + s * wire) / segments_in_flight);
  m.latency_s = 2 * alpha_s + s * wire - p;
  m.per_byte_s = p / s;
  return m;
}

namespace {

// Ethernet (MTU 1500) carrying TCP with timestamps: 1448 payload bytes per 1538 bytes on the wire
// (preamble 8, header 14, IP 20, TCP 32, FCS 4, inter-frame gap 12).
constexpr double TCP_OVER_ETHERNET = 1448.0 / 1538.0;

SoftwareCost nccl(const char* name, double efficiency, double slot_bytes, double step_overhead_s, double call_s) {
  SoftwareCost c;
  c.preset = name;
  c.send_overhead_s = step_overhead_s;
  c.protocol_efficiency = efficiency;
  // Credit-based: the receiver's NCCL_STEPS slots are posted at connection set-up; a slot is reused
  // once the receiver has consumed it (src/device/prims_simple.h, waitPeer). No per-message handshake.
  c.rendezvous = Rendezvous::CREDIT;
  c.segment_bytes = slot_bytes;
  c.segments_in_flight = 8;            // NCCL_STEPS
  c.call_cost_s = call_s;
  return c;
}

}  // namespace

std::optional<SoftwareCost> software_preset(const std::string& name) {
  if (name == "ideal") return SoftwareCost{};
  if (name == "gloo") {
    SoftwareCost c;
    c.preset = name;
    c.send_overhead_s = 15e-6;
    c.recv_overhead_s = 15e-6;
    c.protocol_efficiency = TCP_OVER_ETHERNET;
    c.rendezvous = Rendezvous::SEGMENT;  // a send waits for the peer's NOTIFY_RECV_READY
    c.segment_bytes = 1024.0 * 1024.0;   // AllreduceOptionsImpl::kMaxSegmentSize
    c.segments_in_flight = 2;            // "two are in flight at all times"
    c.call_cost_s = 50e-6;
    return c;
  }
  if (name == "mpi") {
    SoftwareCost c;
    c.preset = name;
    c.send_overhead_s = 2e-6;
    c.recv_overhead_s = 2e-6;
    c.protocol_efficiency = TCP_OVER_ETHERNET;
    c.rendezvous = Rendezvous::MESSAGE;    // RTS/CTS above the eager limit
    c.eager_limit_bytes = 64.0 * 1024.0;   // Open MPI's btl_tcp_eager_limit
    c.call_cost_s = 5e-6;
    return c;
  }
  // NCCL: slot = NCCL_BUFFSIZE (per protocol) / NCCL_STEPS; payload share of a line; tuning.cc's
  // ring base latency per call and network hardware latency per step.
  if (name == "nccl_simple") return nccl("nccl_simple", 1.0, 4194304.0 / 8, 6.6e-6, 8.4e-6);
  if (name == "nccl_ll") return nccl("nccl_ll", 0.5, 524288.0 / 8, 0.9e-6, 6.6e-6);
  if (name == "nccl_ll128") return nccl("nccl_ll128", 120.0 / 128.0, 4915200.0 / 8, 2.5e-6, 14.0e-6);
  if (name == "nccl") {  // NCCL's tuner: per call, the protocol of least predicted time (protocol_choice.hpp)
    SoftwareCost c = *software_preset("nccl_simple");
    c.preset = name;
    for (const char* p : {"nccl_ll", "nccl_ll128", "nccl_simple"})
      c.protocols.push_back(std::make_shared<const SoftwareCost>(*software_preset(p)));
    return c;
  }
  return std::nullopt;
}

const char* software_preset_names() { return "ideal, gloo, mpi, nccl_simple, nccl_ll, nccl_ll128, nccl"; }

namespace {

SoftwareCost named(const std::string& name, const std::string& path) {
  auto preset = software_preset(name);
  if (!preset)
    throw ConfigError(path, fmt::format("unknown software preset \"{}\"; valid presets are: {}", excerpt(name),
                                        software_preset_names()));
  return *preset;
}

void check_range(double v, double lo, double hi, const std::string& path, const char* what) {
  if (!(v >= lo && v <= hi)) throw ConfigError(path, fmt::format("{} must be in [{:g}, {:g}], got {:g}", what, lo, hi, v));
}

}  // namespace

nlohmann::json to_json(const SoftwareCost& c) {
  const char* names[] = {"none", "message", "segment", "credit"};
  if (!c.protocols.empty()) {  // a per-call choice: its candidates, each in full
    nlohmann::json protocols = nlohmann::json::array();
    for (const auto& p : c.protocols) protocols.push_back(to_json(*p));
    return {{"preset", c.preset}, {"protocol", "per collective call, the least call cost + closed form"},
            {"protocols", protocols}};
  }
  return {{"preset", c.preset},
          {"send_overhead_s", c.send_overhead_s},
          {"recv_overhead_s", c.recv_overhead_s},
          {"protocol_efficiency", c.protocol_efficiency},
          {"rendezvous", names[static_cast<int>(c.rendezvous)]},
          {"eager_limit_bytes", c.eager_limit_bytes},
          {"segment_bytes", c.segment_bytes},
          {"segments_in_flight", c.segments_in_flight}};
}

nlohmann::json to_scenario_json(const SoftwareCost& c) {
  if (!c.protocols.empty()) return c.preset;  // read back by name
  nlohmann::json j = to_json(c);
  for (const char* key : {"send_overhead", "recv_overhead"}) {
    j[key] = j[std::string(key) + "_s"];
    j.erase(std::string(key) + "_s");
  }
  j["eager_limit"] = j["eager_limit_bytes"];
  j.erase("eager_limit_bytes");
  return j;
}

SoftwareCost read_software(const nlohmann::json& value, const std::string& path) {
  if (value.is_string()) return named(value.get<std::string>(), path);
  ObjectReader r(value, path);
  SoftwareCost c = named(r.string("preset", "ideal"), r.path_of("preset"));
  if (!c.protocols.empty()) {
    for (const auto& [key, v] : value.items())
      if (key != "preset")
        throw ConfigError(r.path_of(key), fmt::format("\"{}\" picks one of its protocols per call and takes no field "
                                                      "of its own; set a protocol's with \"nccl_ll\", \"nccl_ll128\" "
                                                      "or \"nccl_simple\"",
                                                      c.preset));
    r.finish();
    return c;
  }
  c.send_overhead_s = r.time_s("send_overhead", c.send_overhead_s);
  check_range(c.send_overhead_s, 0, 1, r.path_of("send_overhead"), "a per-message overhead (s)");
  c.recv_overhead_s = r.time_s("recv_overhead", c.recv_overhead_s);
  check_range(c.recv_overhead_s, 0, 1, r.path_of("recv_overhead"), "a per-message overhead (s)");
  c.protocol_efficiency = r.number("protocol_efficiency", c.protocol_efficiency, 1e-3, 1.0);
  const char* names[] = {"none", "message", "segment", "credit"};
  const std::string rv =
      r.choice("rendezvous", {"none", "message", "segment", "credit"}, names[static_cast<int>(c.rendezvous)]);
  c.rendezvous = rv == "none"      ? Rendezvous::NONE
                 : rv == "message" ? Rendezvous::MESSAGE
                 : rv == "segment" ? Rendezvous::SEGMENT
                                   : Rendezvous::CREDIT;
  c.eager_limit_bytes = r.bytes("eager_limit", c.eager_limit_bytes);
  check_range(c.eager_limit_bytes, 0, 1e12, r.path_of("eager_limit"), "the eager limit (bytes)");
  c.segment_bytes = r.bytes("segment_bytes", c.segment_bytes);
  c.segments_in_flight = static_cast<int>(r.integer("segments_in_flight", c.segments_in_flight, 2, 1024));
  if (c.rendezvous == Rendezvous::SEGMENT || c.rendezvous == Rendezvous::CREDIT)
    check_range(c.segment_bytes, 1, 1e12, r.path_of("segment_bytes"),
                fmt::format("with \"rendezvous\": \"{}\", the segment size (bytes)", rv).c_str());
  if (r.has("call_cost")) {
    c.call_cost_s = r.time_s("call_cost", 0);
    check_range(*c.call_cost_s, 0, 1, r.path_of("call_cost"), "the call cost (s)");
  }
  r.finish();
  return c;
}

}  // namespace ddlsim::models
