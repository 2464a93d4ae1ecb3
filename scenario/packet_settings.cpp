#include "scenario/packet_settings.hpp"

#include "models/error.hpp"
#include "models/json_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace ddlsim::sim {

const std::vector<std::string>& tcp_variants() {
  // ns-3 3.37's congestion controls (src/internet/model/tcp-*.cc) but DCTCP, which needs switches
  // that mark at a threshold (RED's), not offered here.
  static const std::vector<std::string> names = {"cubic",    "newreno",  "linux_reno", "bbr",   "bic",
                                                 "highspeed", "htcp",    "hybla",      "illinois", "ledbat",
                                                 "lp",       "scalable", "vegas",      "veno",  "westwood", "yeah"};
  return names;
}

std::string ns3_tcp_type(const std::string& variant) {
  static const std::map<std::string, std::string> types = {
      {"cubic", "TcpCubic"},   {"newreno", "TcpNewReno"}, {"linux_reno", "TcpLinuxReno"}, {"bbr", "TcpBbr"},
      {"bic", "TcpBic"},       {"highspeed", "TcpHighSpeed"}, {"htcp", "TcpHtcp"},      {"hybla", "TcpHybla"},
      {"illinois", "TcpIllinois"}, {"ledbat", "TcpLedbat"}, {"lp", "TcpLp"},              {"scalable", "TcpScalable"},
      {"vegas", "TcpVegas"},   {"veno", "TcpVeno"},       {"westwood", "TcpWestwood"},   {"yeah", "TcpYeah"}};
  const auto it = types.find(variant);
  return it == types.end() ? std::string{} : "ns3::" + it->second;
}

std::string to_string(QueueDiscipline q) { return q == QueueDiscipline::DROP_TAIL ? "drop_tail" : "fq_codel"; }

PacketSettings read_packet_settings(ObjectReader r) {
  PacketSettings s;
  s.tcp = r.choice("tcp", tcp_variants(), s.tcp);
  // ns-3's MTU is a 16-bit count: the segment and its 52 bytes of IPv4 and TCP headers fit it.
  s.segment_bytes = static_cast<int>(r.integer("segment_bytes", s.segment_bytes, 64, 65535 - 52));
  s.send_buffer_bytes = static_cast<std::int64_t>(r.bytes("send_buffer", static_cast<double>(s.send_buffer_bytes)));
  s.receive_buffer_bytes = static_cast<std::int64_t>(r.bytes("receive_buffer", static_cast<double>(s.receive_buffer_bytes)));
  for (const auto& [key, value] : {std::pair{"send_buffer", s.send_buffer_bytes}, std::pair{"receive_buffer", s.receive_buffer_bytes}})
    if (value < s.segment_bytes || value > 1'073'741'824)
      throw ConfigError(r.path_of(key), fmt::format("{} bytes: a socket buffer holds at least one segment ({} bytes) and "
                                                    "at most 1 GiB (TCP's scaled window)",
                                                    value, s.segment_bytes));
  s.queue = r.choice("queue", {"drop_tail", "fq_codel"}, "drop_tail") == "drop_tail" ? QueueDiscipline::DROP_TAIL
                                                                                     : QueueDiscipline::FQ_CODEL;
  s.queue_packets = static_cast<int>(r.integer("queue_packets", s.queue_packets, 1, 1'000'000));
  s.ecn = r.boolean("ecn", s.ecn);
  if (s.ecn && s.queue != QueueDiscipline::FQ_CODEL)
    throw ConfigError(r.path_of("ecn"), "ECN needs a queue that marks: set \"queue\": \"fq_codel\" (a drop-tail "
                                        "queue only drops)");
  s.min_rto_s = r.time_s("min_rto", s.min_rto_s);
  if (s.min_rto_s < 1e-3 || s.min_rto_s > 60)
    throw ConfigError(r.path_of("min_rto"), fmt::format("{} s: the retransmission timeout's floor must be within "
                                                        "[1 ms, 60 s] (Linux: 200 ms)",
                                                        s.min_rto_s));
  r.finish();
  return s;
}

}  // namespace ddlsim::sim
