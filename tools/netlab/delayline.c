// ddlsim netlab: the delay line of the one-machine network lab (docs/validation.md, "Lab").
//
// The lab's kernel has no netem qdisc, so a link's one-way delay cannot be a qdisc. Instead every
// host namespace queues each IPv4 packet that arrives on its eth0 to NFQUEUE (an iptables rule in
// the raw table's PREROUTING chain, added by setup.sh), and this program holds the packet for the
// link's delay before it lets the kernel deliver it. One process serves every namespace: it opens
// one netfilter-queue socket per namespace (a netlink socket belongs to the namespace it was
// created in, so the program enters each namespace, opens the socket, and comes back).
//
// Downlink serialisation. HTB, the lab's rate shaper, is a token bucket: a packet leaves while the
// class still has tokens and is charged afterwards, so a 64 KB GSO packet crosses an idle shaper
// at once and a small transfer pays no serialisation at all. With a rate, the delay line also
// plays the host's downlink as a wire of that rate: a packet's transmission starts when it arrives
// or when the previous one has finished, whichever is later, and lasts wire_bytes * 8 / rate; it
// is delivered one delay after its transmission ends. wire_bytes counts the Ethernet, IP and TCP
// headers of every MTU-sized segment of a GSO packet, as HTB counts it, so behind an HTB of the
// same rate the line only adds the last packet's serialisation, never a queue of its own.
//
// Why on the receiver, after the routing decision's input hook: there the packet has left the
// sender's socket accounting, so TCP's small-queue limit does not slow a sender whose packets are
// held (a delay on the sender's egress would cap the data in flight at about 1 ms worth). With
// equal delays on every host, delaying on arrival gives the same one-way delay as on departure.
//
// Cost: only the packet's first 80 bytes are copied to user space (enough for the IP and TCP
// headers), GSO packets are queued whole, and the delay is the same for every packet of a queue,
// so packets leave in arrival order and one batch verdict ("accept every id up to k") releases all
// the packets that are due. The program asks for SCHED_FIFO so that busy ranks cannot delay it,
// and sleeps on a timerfd armed at the next release time (CLOCK_MONOTONIC, absolute).
//
// usage: delayline [-q QUEUE] DELAY_US RATE_BPS NETNS...
//   DELAY_US  one-way delay in microseconds (0 = none)
//   RATE_BPS  downlink rate in bits/s for the serialisation (0 = no serialisation)
//   NETNS     names of the host namespaces (/run/netns/NAME)
// It prints "delayline: ready ..." on stderr once every queue is bound, and on SIGTERM or SIGINT
// releases every packet it still holds, prints its counters and exits 0. Exit 2: bad arguments;
// 1: a system call failed (the message names it).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/netfilter.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

enum {
  MAX_HOSTS = 256,
  COPY_BYTES = 80,            // IPv4 header (<= 60) + the TCP header's data-offset byte
  MTU = 1500,
  ETHERNET_HEADER = 14,
  QUEUE_MAXLEN = 1 << 18,     // packets the kernel may hold for one queue
  SOCKET_BUFFER = 64 << 20,   // netlink receive buffer
};

/// A held packet: its queue id and when it may go.
typedef struct {
  uint32_t id;
  int64_t release_ns;
} Held;

/// One host namespace's queue and the FIFO of the packets it holds.
typedef struct {
  const char* netns;
  struct nfq_handle* handle;
  struct nfq_q_handle* queue;
  int fd;
  Held* fifo;
  size_t capacity, head, count;
  int64_t arrival_ns;      // when the datagram being parsed was read
  int64_t wire_free_ns;    // when the emulated downlink has finished its last packet
  uint64_t packets, wire_bytes, batches, overflows, lost_reads;
} Host;

static Host hosts[MAX_HOSTS];
static int host_count;
static int64_t delay_ns;
static double ns_per_wire_byte;  // 8e9 / rate, 0 = no serialisation
static volatile sig_atomic_t stopping;

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fail(const char* what, const char* netns) {
  fprintf(stderr, "delayline: %s%s%s: %s\n", what, netns ? " in namespace " : "", netns ? netns : "", strerror(errno));
  exit(1);
}

/// Bytes the packet occupies on an Ethernet wire as HTB counts them: the headers once per
/// MTU-sized segment of a GSO packet; 64 when the headers cannot be read.
static uint64_t wire_bytes(const unsigned char* ip, int length) {
  if (length < 20 || (ip[0] >> 4) != 4) return 64;
  const unsigned ip_header = (ip[0] & 0x0fu) * 4u;
  const unsigned total = ((unsigned)ip[2] << 8) | ip[3];
  unsigned headers = ip_header;
  if (ip[9] == IPPROTO_TCP && length >= (int)ip_header + 13) headers += (ip[ip_header + 12] >> 4) * 4u;
  if (total <= MTU || headers >= MTU || total < headers) return total + ETHERNET_HEADER;
  const unsigned payload = total - headers;
  const unsigned mss = MTU - headers;
  const unsigned segments = (payload + mss - 1) / mss;
  return payload + (uint64_t)segments * (headers + ETHERNET_HEADER);
}

static int on_packet(struct nfq_q_handle* queue, struct nfgenmsg* message, struct nfq_data* data, void* context) {
  (void)message;
  Host* host = context;
  const struct nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  if (header == NULL) return 0;
  const uint32_t id = ntohl(header->packet_id);
  int64_t sent_ns = host->arrival_ns;
  if (ns_per_wire_byte > 0) {
    unsigned char* payload = NULL;
    const int length = nfq_get_payload(data, &payload);
    const uint64_t bytes = wire_bytes(payload, payload ? length : 0);
    const int64_t start = host->arrival_ns > host->wire_free_ns ? host->arrival_ns : host->wire_free_ns;
    host->wire_free_ns = start + (int64_t)((double)bytes * ns_per_wire_byte + 0.5);
    host->wire_bytes += bytes;
    sent_ns = host->wire_free_ns;
  }
  if (host->count == host->capacity) {  // cannot happen below QUEUE_MAXLEN; never lose a packet
    host->overflows++;
    nfq_set_verdict(queue, id, NF_ACCEPT, 0, NULL);
    return 0;
  }
  Held* slot = &host->fifo[(host->head + host->count) % host->capacity];
  slot->id = id;
  slot->release_ns = sent_ns + delay_ns;
  host->count++;
  host->packets++;
  return 0;
}

/// Accepts every packet of `host` due at `now` with one batch verdict; returns the next release
/// time (INT64_MAX when nothing is held).
static int64_t release_due(Host* host, int64_t now) {
  uint32_t last = 0;
  int any = 0;
  while (host->count > 0 && host->fifo[host->head].release_ns <= now) {
    last = host->fifo[host->head].id;
    any = 1;
    host->head = (host->head + 1) % host->capacity;
    host->count--;
  }
  if (any) {
    nfq_set_verdict_batch(host->queue, last, NF_ACCEPT);
    host->batches++;
  }
  return host->count > 0 ? host->fifo[host->head].release_ns : INT64_MAX;
}

static void bind_host(Host* host, const char* netns, int queue_number, int home) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "/run/netns/%s", netns);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open the namespace", netns);
  if (setns(fd, CLONE_NEWNET) < 0) fail("cannot enter the namespace", netns);
  close(fd);
  host->netns = netns;
  host->handle = nfq_open();
  if (host->handle == NULL) fail("nfq_open failed", netns);
  host->queue = nfq_create_queue(host->handle, (uint16_t)queue_number, on_packet, host);
  if (host->queue == NULL) fail("cannot bind the queue (is another delay line running?)", netns);
  const uint8_t mode = ns_per_wire_byte > 0 ? NFQNL_COPY_PACKET : NFQNL_COPY_META;
  if (nfq_set_mode(host->queue, mode, COPY_BYTES) < 0) fail("nfq_set_mode failed", netns);
  if (nfq_set_queue_maxlen(host->queue, QUEUE_MAXLEN) < 0) fail("nfq_set_queue_maxlen failed", netns);
  if (nfq_set_queue_flags(host->queue, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0)
    fprintf(stderr, "delayline: warning: GSO packets will be segmented in %s\n", netns);
  host->fd = nfq_fd(host->handle);
  const int buffer = SOCKET_BUFFER, on = 1;
  if (setsockopt(host->fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) < 0)
    fprintf(stderr, "delayline: warning: receive buffer not enlarged in %s: %s\n", netns, strerror(errno));
  setsockopt(host->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on);
  fcntl(host->fd, F_SETFL, fcntl(host->fd, F_GETFL) | O_NONBLOCK);
  host->capacity = QUEUE_MAXLEN;
  host->fifo = calloc(host->capacity, sizeof(Held));
  if (host->fifo == NULL) fail("out of memory", netns);
  if (setns(home, CLONE_NEWNET) < 0) fail("cannot return to the original namespace", NULL);
}

static void on_signal(int signal_number) {
  (void)signal_number;
  stopping = 1;
}

static void usage(void) {
  fprintf(stderr, "usage: delayline [-q QUEUE] DELAY_US RATE_BPS NETNS...\n");
  exit(2);
}

static double number_argument(const char* text, const char* what) {
  char* end = NULL;
  errno = 0;
  const double value = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || value < 0) {
    fprintf(stderr, "delayline: %s must be a number >= 0, got \"%s\"\n", what, text);
    exit(2);
  }
  return value;
}

int main(int argc, char** argv) {
  int queue_number = 0;
  for (int option; (option = getopt(argc, argv, "q:")) != -1;) {
    if (option != 'q') usage();
    queue_number = (int)number_argument(optarg, "QUEUE");
  }
  if (argc - optind < 3) usage();
  delay_ns = (int64_t)(number_argument(argv[optind], "DELAY_US") * 1000.0 + 0.5);
  const double rate_bps = number_argument(argv[optind + 1], "RATE_BPS");
  ns_per_wire_byte = rate_bps > 0 ? 8e9 / rate_bps : 0.0;
  if (argc - optind - 2 > MAX_HOSTS) {
    fprintf(stderr, "delayline: at most %d namespaces\n", MAX_HOSTS);
    return 2;
  }

  const int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) fail("cannot open the original namespace", NULL);
  for (int i = optind + 2; i < argc; ++i) bind_host(&hosts[host_count++], argv[i], queue_number, home);
  close(home);

  const struct sched_param priority = {.sched_priority = 40};
  if (sched_setscheduler(0, SCHED_FIFO, &priority) < 0)
    fprintf(stderr, "delayline: warning: no real-time priority (%s); delays may jitter\n", strerror(errno));
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  struct sigaction action = {.sa_handler = on_signal};
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGINT, &action, NULL);

  const int poller = epoll_create1(EPOLL_CLOEXEC);
  const int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (poller < 0 || timer < 0) fail("cannot create the event loop", NULL);
  struct epoll_event timer_event = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
  epoll_ctl(poller, EPOLL_CTL_ADD, timer, &timer_event);
  for (int i = 0; i < host_count; ++i) {
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(poller, EPOLL_CTL_ADD, hosts[i].fd, &event) < 0) fail("epoll_ctl failed", hosts[i].netns);
  }
  fprintf(stderr, "delayline: ready: delay %.1f us, serialisation %s at %.6g bit/s, %d namespaces, queue %d, pid %d\n",
          delay_ns / 1e3, ns_per_wire_byte > 0 ? "on" : "off", rate_bps, host_count, queue_number, (int)getpid());
  fflush(stderr);

  static char datagram[1 << 17];
  struct epoll_event events[MAX_HOSTS + 1];
  int64_t armed_ns = INT64_MAX;
  while (!stopping) {
    int64_t next_ns = INT64_MAX;
    const int64_t now = monotonic_ns();
    for (int i = 0; i < host_count; ++i) {
      const int64_t next = release_due(&hosts[i], now);
      if (next < next_ns) next_ns = next;
    }
    if (next_ns != armed_ns) {  // arm (or disarm, with a zero time) the timer at the next release
      struct itimerspec when = {0};
      if (next_ns != INT64_MAX) {
        when.it_value.tv_sec = next_ns / 1000000000LL;
        when.it_value.tv_nsec = next_ns % 1000000000LL;
      }
      timerfd_settime(timer, TFD_TIMER_ABSTIME, &when, NULL);
      armed_ns = next_ns;
    }
    const int ready = epoll_wait(poller, events, MAX_HOSTS + 1, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      fail("epoll_wait failed", NULL);
    }
    for (int k = 0; k < ready; ++k) {
      if (events[k].data.u32 == UINT32_MAX) {
        uint64_t expirations;
        if (read(timer, &expirations, sizeof expirations) < 0) { /* spurious wake-up: nothing to do */ }
        armed_ns = INT64_MAX;  // expired: re-armed by the loop
        continue;
      }
      Host* host = &hosts[events[k].data.u32];
      for (;;) {
        const ssize_t got = recv(host->fd, datagram, sizeof datagram, 0);
        if (got < 0) {
          if (errno == ENOBUFS) {
            host->lost_reads++;
            continue;
          }
          break;  // EAGAIN: drained
        }
        host->arrival_ns = monotonic_ns();
        nfq_handle_packet(host->handle, datagram, (int)got);
      }
    }
  }

  for (int i = 0; i < host_count; ++i) {
    Host* host = &hosts[i];
    if (host->count > 0)
      nfq_set_verdict_batch(host->queue, host->fifo[(host->head + host->count - 1) % host->capacity].id, NF_ACCEPT);
    fprintf(stderr,
            "delayline: %s: packets %llu, wire bytes %llu, release batches %llu, overflows %llu, lost reads %llu\n",
            host->netns, (unsigned long long)host->packets, (unsigned long long)host->wire_bytes,
            (unsigned long long)host->batches, (unsigned long long)host->overflows,
            (unsigned long long)host->lost_reads);
    nfq_destroy_queue(host->queue);
    nfq_close(host->handle);
  }
  return 0;
}
