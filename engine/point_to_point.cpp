// ddlsim: point-to-point and one-sided messages between workers (see point_to_point.hpp).
#include "engine/point_to_point.hpp"

#include "engine/context.hpp"
#include "engine/flow_bounds.hpp"

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

/// True when the library makes a receive announce itself (gloo's NOTIFY_RECV_READY).
bool notifies(const models::SoftwareCost* lib) {
  return lib != nullptr && lib->sends_ready_notices();
}

ReadyNotices& notices_of(Context& ctx, int src, int dst, int tag) {
  auto& n = ctx.ready_notices[{src, dst, tag}];
  if (!n.posted) n.posted = sg4::Semaphore::create(0);
  return n;
}
}  // namespace

const models::SoftwareCost* library(const Context& ctx) {
  const auto& software = ctx.executor->network().software;
  return software && !software->ideal() ? software.get() : nullptr;
}

double credit_rate_cap(const Context& ctx, int src, int dst, double bytes) {
  const auto* lib = library(ctx);
  if (lib == nullptr || lib->rendezvous != models::Rendezvous::CREDIT || !ctx.executor->network().rate_caps) return -1;
  const double alpha = ctx.executor->latency(src, dst) * ctx.executor->network().latency_factor;
  const auto m = lib->message(bytes, alpha, ctx.executor->beta(src, dst));
  return m.per_byte_s > m.wire_per_byte_s ? 1.0 / m.per_byte_s : -1;
}

sg4::CommPtr post_data(sg4::Mailbox* box, void* payload, std::uint64_t units, double rate, double efficiency) {
  auto comm = box->put_init(payload, units);
  if (rate > 0) comm->set_rate(rate / efficiency * byte_scale());
  comm->start();
  if (rate > 0) FlowBounds::note_rate(*comm, rate / efficiency * byte_scale());
  return comm;
}

void PointToPoint::post_after_notice(models::CommHandle handle, sg4::Mailbox* box, models::Message* msg,
                                     std::uint64_t units, double rate, int tag, bool eager) {
  // The data leaves when the receive's notice has arrived. When it has (and no earlier send to the
  // same receive queue is still waiting), the caller sends at once; else gloo queues the send
  // (pair.cc 927) and its device thread sends it when the notice comes (handleRemotePendingRecv,
  // 615-640) while the caller carries on: here one progress actor per (peer, tag) on this worker's
  // host, which takes the queued sends in order.
  Pending& p = pending_.at(handle);
  auto& notices = notices_of(ctx_, rank_, p.peer, tag);
  const double efficiency = library(ctx_)->protocol_efficiency;
  auto& channel = progress_[{p.peer, tag}];
  if (channel.queue.empty() && !notices.posted->would_block() && notices.arrive_s.front() <= sg4::Engine::get_clock()) {
    notices.posted->acquire();
    notices.arrive_s.pop_front();
    p.comm = post_data(box, msg, units, rate, efficiency);
    return;
  }
  p.posted = sg4::Semaphore::create(0);
  channel.queue.push_back(Queued{handle, box, msg, units, rate, eager});
  if (!channel.jobs) {
    // It lives until finish() stops it (stop_progress), every send having completed; the sends
    // themselves are posted by actors of their own (below).
    channel.jobs = sg4::Semaphore::create(0);
    channel.stopped = sg4::Semaphore::create(0);
    sg4::Actor::create("p2p-progress", sg4::this_actor::get_host(),
                       [this, jobs = channel.jobs, stopped = channel.stopped, &channel, &notices, efficiency] {
      while (true) {
        jobs->acquire();
        if (channel.queue.empty()) {  // stopped: tell stop_progress, which waits for this
          stopped->release();
          return;
        }
        const Queued job = channel.queue.front();
        if (job.eager && notices.posted->would_block()) {  // an eager send goes without its notice
          ++notices.owed;
        } else {
          notices.posted->acquire();
          const double at = notices.arrive_s.front();
          notices.arrive_s.pop_front();
          if (!job.eager && at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(at);
        }
        channel.queue.pop_front();
        // A sender of its own posts it and waits for it (SimGrid's wait on another actor's comm
        // leaks its wait), then tells the caller's wait(); Pending outlives it (std::map nodes do
        // not move, and the caller's wait() erases it only after).
        sg4::Actor::create("p2p-send", sg4::this_actor::get_host(), [this, job, efficiency] {
          Pending& q = pending_.at(job.handle);
          q.comm = post_data(job.box, job.msg, job.units, job.rate, efficiency);
          q.comm->wait();
          q.posted->release();
        });
      }
    });
  }
  channel.jobs->release();
}

void PointToPoint::stop_progress() {
  // Every queued send has been posted and waited for (wait_outstanding): an empty queue ends each
  // progress actor, so none is killed while it waits (which leaks SimGrid's wait).
  // It waits for each actor to have left its wait: a daemon still waiting when the last worker
  // ends would be killed there.
  for (auto& [key, channel] : progress_)
    if (channel.jobs) {
      channel.jobs->release();
      channel.stopped->acquire();
      channel.jobs = nullptr;
      channel.stopped = nullptr;
    }
}

models::CommHandle PointToPoint::send_to(sg4::Mailbox* box, const char* what, int peer, double bytes, int tag,
                                         std::int64_t version, int iteration, bool two_sided) {
  check_peer(ctx_, rank_, peer, what);
  const auto* lib = library(ctx_);
  Pending p;
  p.iteration = iteration;
  p.posted_s = sg4::Engine::get_clock();
  p.what = what;
  p.peer = peer;
  p.one_sided = !two_sided;
  if (lib != nullptr && lib->send_overhead_s > 0) sg4::this_actor::sleep_for(lib->send_overhead_s);
  auto* msg = new models::Message{rank_, tag, bytes, version};
  p.sent = *msg;
  const auto units = wire_units(ctx_, rank_, peer, bytes);
  const double rate = credit_rate_cap(ctx_, rank_, peer, bytes);
  const double efficiency = lib != nullptr ? lib->protocol_efficiency : 1.0;
  if (two_sided && notifies(lib)) {
    if (bytes > lib->eager_limit_bytes) {
      const auto handle = track(std::move(p));
      post_after_notice(handle, box, msg, units, rate, tag);
      count_sent(bytes);
      return handle;
    } else if (const auto queued = progress_.find({peer, tag}); queued != progress_.end() && !queued->second.queue.empty()) {
      // behind a queued send to the same receive queue: messages do not overtake (MPI's
      // non-overtaking rule; one TCP stream per gloo pair), so the progress actor sends it in turn
      const auto handle = track(std::move(p));
      post_after_notice(handle, box, msg, units, rate, tag, true);
      count_sent(bytes);
      return handle;
    } else {  // eager: posted at once; the receive's notice, when it comes, is this send's
      auto& notices = notices_of(ctx_, rank_, peer, tag);
      if (notices.posted->would_block()) {
        ++notices.owed;
      } else {
        notices.posted->acquire();
        notices.arrive_s.pop_front();
      }
      p.comm = post_data(box, msg, units, rate, efficiency);
    }
  } else {
    p.comm = post_data(box, msg, units, rate, efficiency);
  }
  count_sent(bytes);
  return track(std::move(p));
}

void PointToPoint::count_sent(double bytes) {
  auto& rec = ctx_.result.workers[static_cast<std::size_t>(rank_)];
  rec.bytes_sent += bytes;
  ++rec.messages_sent;
}

models::CommHandle PointToPoint::isend(int peer, double bytes, int tag, std::int64_t version, int iteration) {
  return send_to(box(rank_, peer, tag), "send", peer, bytes, tag, version, iteration, true);
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
  if (const auto* lib = library(ctx_); notifies(lib)) {  // NOTIFY_RECV_READY leaves now, one path latency to the sender
    auto& notices = notices_of(ctx_, peer, rank_, tag);
    if (notices.owed > 0) {
      --notices.owed;  // an eager send took it
    } else {
      const double alpha = ctx_.executor->latency(rank_, peer) * ctx_.executor->network().latency_factor;
      notices.arrive_s.push_back(sg4::Engine::get_clock() + alpha);
      notices.posted->release();
    }
  }
  return handle;
}

models::CommHandle PointToPoint::put(int peer, double bytes, int tag, std::int64_t version, int iteration) {
  return send_to(sg4::Mailbox::by_name(fmt::format("put>{}", peer)), "put", peer, bytes, tag, version, iteration, false);
}

models::Message PointToPoint::wait(models::CommHandle handle) {
  auto it = pending_.find(handle);
  if (it == pending_.end())
    throw std::logic_error(fmt::format("worker {}: wait on communication handle {}, which is not in flight", rank_, handle));
  Pending& p = it->second;
  if (p.posted) p.posted->acquire();  // a queued send: its sender actor has seen it complete
  else p.comm->wait();
  if (FlowBounds::active()) FlowBounds::forget(*p.comm);
  double finished = sg4::Engine::get_clock() < p.comm->get_finish_time() ? sg4::Engine::get_clock()
                                                                         : p.comm->get_finish_time();
  if (const auto* lib = library(ctx_); p.receive && lib != nullptr && lib->recv_overhead_s > 0) {
    sg4::this_actor::sleep_for(lib->recv_overhead_s);  // the receiver's CPU takes the message in
    finished = sg4::Engine::get_clock();
  } else if (!p.receive && p.one_sided && notifies(lib)) {
    // Remote completion: the target's acknowledgement, header only, leaves when the put has arrived.
    const double ack = finished + ctx_.executor->latency(p.peer, rank_) * ctx_.executor->network().latency_factor;
    if (ack > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(ack);
    finished = std::max(finished, ack);
  }
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

void PointToPoint::drain() {
  take_arrived_puts();
  stop_progress();
}

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
