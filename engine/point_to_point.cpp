// ddlsim: point-to-point and one-sided messages between workers (see point_to_point.hpp).
#include "engine/point_to_point.hpp"

#include "engine/context.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::sim::detail {

PointToPoint::~PointToPoint() {
  for (auto& [handle, p] : pending_)
    if (p.receive) delete static_cast<models::Message*>(p.payload);
}

sg4::Mailbox* PointToPoint::box(int src, int dst, int tag) {
  auto& mb = boxes_[{src, dst, tag}];
  if (mb == nullptr) mb = sg4::Mailbox::by_name(fmt::format("p2p:{}>{}#{}", src, dst, tag));
  return mb;
}

models::CommHandle PointToPoint::track(Pending pending) {
  const auto handle = next_++;
  pending_.emplace(handle, std::move(pending));
  return handle;
}

namespace {
void check_peer(const Context& ctx, int rank, int peer, const char* what) {
  if (peer < 0 || peer >= ctx.group.workers || peer == rank)
    throw std::logic_error(fmt::format("worker {}: {} with peer {} (valid peers: the other workers 0..{})", rank, what,
                                       peer, ctx.group.workers - 1));
}
}  // namespace

models::CommHandle PointToPoint::send_to(sg4::Mailbox* box, const char* what, int peer, double bytes, int tag,
                                         std::int64_t version, int iteration) {
  check_peer(ctx_, rank_, peer, what);
  auto* msg = new models::Message{rank_, tag, bytes, version};
  Pending p;
  p.sent = *msg;
  p.comm = box->put_async(msg, wire_units(ctx_, rank_, peer, bytes));
  p.iteration = iteration;
  p.posted_s = sg4::Engine::get_clock();
  p.what = what;
  p.peer = peer;
  auto& rec = ctx_.result.workers[static_cast<std::size_t>(rank_)];
  rec.bytes_sent += bytes;
  ++rec.messages_sent;
  return track(std::move(p));
}

models::CommHandle PointToPoint::isend(int peer, double bytes, int tag, std::int64_t version, int iteration) {
  return send_to(box(rank_, peer, tag), "send", peer, bytes, tag, version, iteration);
}

models::CommHandle PointToPoint::irecv(int peer, int tag, int iteration) {
  check_peer(ctx_, rank_, peer, "receive");
  Pending p;
  p.receive = true;
  p.iteration = iteration;
  p.posted_s = sg4::Engine::get_clock();
  p.what = "recv";
  p.peer = peer;
  const auto handle = track(std::move(p));
  auto& slot = pending_.at(handle);
  slot.comm = box(peer, rank_, tag)->get_async(&slot.payload);  // std::map nodes do not move
  return handle;
}

models::CommHandle PointToPoint::put(int peer, double bytes, int tag, std::int64_t version, int iteration) {
  return send_to(sg4::Mailbox::by_name(fmt::format("put>{}", peer)), "put", peer, bytes, tag, version, iteration);
}

models::Message PointToPoint::wait(models::CommHandle handle) {
  auto it = pending_.find(handle);
  if (it == pending_.end())
    throw std::logic_error(fmt::format("worker {}: wait on communication handle {}, which is not in flight", rank_, handle));
  Pending& p = it->second;
  p.comm->wait();
  const double finished = sg4::Engine::get_clock() < p.comm->get_finish_time() ? sg4::Engine::get_clock()
                                                                               : p.comm->get_finish_time();
  done_.emplace_back(p.posted_s, finished);
  if (ctx_.traced(rank_, p.iteration))
    ctx_.trace(rank_, 1, fmt::format("{} {} {}", p.what, p.receive ? "from" : "to", p.peer), p.what, p.posted_s,
               finished - p.posted_s);
  models::Message out = p.sent;
  if (p.receive) {
    std::unique_ptr<models::Message> msg(static_cast<models::Message*>(p.payload));
    out = *msg;
  }
  pending_.erase(it);
  return out;
}

void PointToPoint::take_arrived_puts() {
  auto* mine = sg4::Mailbox::by_name(fmt::format("put>{}", rank_));
  while (mine->ready()) {
    std::unique_ptr<models::Message> msg(mine->get<models::Message>());
    auto [slot, fresh] = newest_.try_emplace({msg->source, msg->tag}, *msg);
    if (!fresh && msg->version >= slot->second.version) slot->second = *msg;
  }
}

std::optional<models::Message> PointToPoint::latest(int peer, int tag) {
  check_peer(ctx_, rank_, peer, "latest");
  take_arrived_puts();
  auto it = newest_.find({peer, tag});
  if (it == newest_.end()) return std::nullopt;
  return it->second;
}

void PointToPoint::wait_outstanding() {
  while (!pending_.empty()) wait(pending_.begin()->first);
}

void PointToPoint::drain() { take_arrived_puts(); }

double PointToPoint::busy_s(double start, double end) {
  if (done_.empty() && pending_.empty()) return 0;  // most models: no point-to-point at all
  auto spans = std::move(done_);
  done_.clear();
  for (const auto& [handle, p] : pending_) spans.emplace_back(p.posted_s, end);  // still in flight
  std::sort(spans.begin(), spans.end());
  double busy = 0, until = start;
  for (const auto& [from, to] : spans) {
    const double a = std::max(from, until), b = std::min(to, end);
    if (b > a) busy += b - a;
    until = std::max(until, std::min(to, end));
  }
  return busy;
}

}  // namespace ddlsim::sim::detail
