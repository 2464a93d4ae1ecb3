#!/usr/bin/env bash
# ddlsim netlab: builds a star network of N hosts on this machine, every link shaped to RATE in
# each direction with a one-way DELAY (docs/validation.md, "Lab").
#
#   setup.sh N RATE DELAY     e.g. setup.sh 4 100Mbps 2ms      (root)
#   setup.sh --check          says whether the lab can run here (exit 0 yes, 1 no, with the reason)
#
#   hosts   network namespaces ddl-w0 .. ddl-w{N-1}; host i has eth0 = 10.78.0.(i+1)/24
#   switch  namespace ddl-hub holding bridge br0; veth h<i> (hub side) <-> ddl-w<i>:eth0
#   rate    HTB, rate = ceil = RATE, on every host's eth0 (its uplink) and on the hub's h<i>
#           (the switch port toward host i: its downlink)
#   delay   the delay line (delayline.c, built by build.sh): an iptables rule in every host's raw
#           PREROUTING chain queues each IPv4 packet arriving on eth0 to it; it holds the packet
#           while it serialises it at RATE on the host's downlink (HTB alone lets a 64 KB GSO
#           packet through at once), then for DELAY, and lets it in
#   RATE    ddlsim's units: 100Mbps, 1Gbps (bits/s), 12.5MBps (bytes/s); or tc's 100mbit, 1gbit
#   DELAY   5ms, 500us, 0.1s, or 0
#
# Idempotent: it first removes whatever an earlier setup recorded. It records what it creates
# (namespaces, the delay line's PID, the configuration) in /run/ddlsim-netlab/ as it goes, so
# teardown.sh removes a lab whose setup failed half-way too. A failed setup removes its own work.
# Environment: DDLSIM_NETLAB_SLOW_START_AFTER_IDLE (0 or 1, default: the kernel's, 1) sets the hosts'
# net.ipv4.tcp_slow_start_after_idle.
#
# Exit status: 0 the lab is up (ping answered), 1 setup failed (the reason on stderr), 2 bad arguments.
set -eEuo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"

usage="usage: setup.sh N RATE DELAY (e.g. setup.sh 4 100Mbps 2ms) | setup.sh --check"

# ---- --check: is the lab permitted here? ----
check() {
  local reason="" probe="ddl-check-$$" iptables
  if [ "$(id -u)" != 0 ]; then reason="not root (the lab needs root for namespaces, tc and iptables)"
  elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then reason="ip or tc is missing (apt-get install iproute2)"
  elif ! iptables=$(netlab_iptables); then reason="iptables is missing (run tools/install-deps.sh --netlab)"
  elif ! command -v ping >/dev/null; then reason="ping is missing (run tools/install-deps.sh --netlab)"
  elif ! "$here/build.sh" >/dev/null 2>/tmp/ddl-netlab-build.$$; then reason="the delay line does not build: $(tail -1 /tmp/ddl-netlab-build.$$)"
  elif ! ip netns add "$probe" 2>/dev/null; then reason="network namespaces are not permitted (ip netns add failed)"
  else
    if ! ip -n "$probe" link add ddl-c0 type veth peer name ddl-c1 2>/dev/null; then reason="veth pairs are not permitted"
    elif ! ip netns exec "$probe" tc qdisc add dev ddl-c0 root handle 1: htb default 1 2>/dev/null; then
      reason="the HTB qdisc is not available"
    elif ! ip netns exec "$probe" "$iptables" -w -t raw -A PREROUTING -i ddl-c0 -j NFQUEUE --queue-num "$NETLAB_QUEUE" 2>/dev/null; then
      reason="iptables cannot add an NFQUEUE rule in a namespace ($iptables)"
    fi
    ip netns del "$probe" 2>/dev/null || true
  fi
  rm -f /tmp/ddl-netlab-build.$$
  if [ -n "$reason" ]; then
    echo "netlab: not available: $reason"
    exit 1
  fi
  echo "netlab: available (namespaces, veth, HTB, $iptables NFQUEUE, delay line built)"
  exit 0
}

case "${1:-}" in
  --check) [ $# -eq 1 ] || netlab_die 2 "$usage"; check ;;
  -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -eq 3 ] || netlab_die 2 "$usage"
hosts=$1 rate=$2 delay=$3
[[ "$hosts" =~ ^[0-9]+$ ]] && [ "$hosts" -ge 2 ] && [ "$hosts" -le "$NETLAB_MAX_HOSTS" ] ||
  netlab_die 2 "N must be an integer from 2 to $NETLAB_MAX_HOSTS, got \"$hosts\""
rate_bps=$(netlab_rate_bps "$rate") ||
  netlab_die 2 "RATE must be a positive rate with a unit (100Mbps, 1Gbps, 12.5MBps, 100mbit), got \"$rate\""
delay_us=$(netlab_delay_us "$delay") ||
  netlab_die 2 "DELAY must be a time with a unit (5ms, 500us, 0.1s) or 0, got \"$delay\""
slow_start=${DDLSIM_NETLAB_SLOW_START_AFTER_IDLE:-}
[[ -z "$slow_start" || "$slow_start" =~ ^[01]$ ]] ||
  netlab_die 2 "DDLSIM_NETLAB_SLOW_START_AFTER_IDLE must be 0 or 1, got \"$slow_start\""
[ "$(id -u)" = 0 ] || netlab_die 1 "setup.sh must run as root"
iptables=$(netlab_iptables) || netlab_die 1 "iptables is missing (run tools/install-deps.sh --netlab)"
delayline=$("$here/build.sh") || netlab_die 1 "the delay line did not build (see above)"

exec 9>"$NETLAB_LOCK"
flock 9
netlab_teardown >/dev/null

failed() {
  echo "netlab: setup failed at line $1; removing what it built" >&2
  [ -f "$NETLAB_STATE/delayline.log" ] && sed 's/^/  /' "$NETLAB_STATE/delayline.log" >&2
  netlab_teardown >/dev/null
  exit 1
}
trap 'failed $LINENO' ERR

mkdir -p "$NETLAB_STATE"
: > "$NETLAB_STATE/namespaces"
add_namespace() {  # recorded before it exists, so a failure in between is still cleaned up
  if [ -e "/run/netns/$1" ]; then
    echo "netlab: namespace $1 exists but no lab recorded it; remove it (ip netns del $1) and retry" >&2
    return 1
  fi
  echo "$1" >> "$NETLAB_STATE/namespaces"
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
}
shape() {  # shape NETNS DEV: one HTB class, rate = ceil = RATE, with a deep FIFO
  ip netns exec "$1" tc qdisc add dev "$2" root handle 1: htb default 1
  ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:1 htb rate "${rate_bps}bit" ceil "${rate_bps}bit" quantum 30000
  ip netns exec "$1" tc qdisc add dev "$2" parent 1:1 handle 10: pfifo limit 10000
}

add_namespace "$NETLAB_HUB"
# Frames crossing the bridge must not meet the hosts' iptables hooks (br_netfilter, when loaded).
ip netns exec "$NETLAB_HUB" sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 \
  net.bridge.bridge-nf-call-arptables=0 2>/dev/null || true
ip -n "$NETLAB_HUB" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$NETLAB_HUB" link set br0 up

names=()
for ((i = 0; i < hosts; i++)); do
  ns="$NETLAB_HOST_PREFIX$i"
  names+=("$ns")
  add_namespace "$ns"
  [ -z "$slow_start" ] || ip netns exec "$ns" sysctl -qw net.ipv4.tcp_slow_start_after_idle="$slow_start"
  ip -n "$NETLAB_HUB" link add "h$i" type veth peer name eth0 netns "$ns"
  ip -n "$ns" addr add "$NETLAB_SUBNET.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$NETLAB_HUB" link set "h$i" master br0 up
  shape "$ns" eth0              # uplink
  shape "$NETLAB_HUB" "h$i"     # downlink
  ip netns exec "$ns" "$iptables" -w -t raw -A PREROUTING -i eth0 -j NFQUEUE --queue-num "$NETLAB_QUEUE"
done

# The delay line, in its own session so that a Ctrl-C meant for a measurement does not stop it.
setsid "$delayline" -q "$NETLAB_QUEUE" "$delay_us" "$rate_bps" "${names[@]}" \
  > "$NETLAB_STATE/delayline.log" 2>&1 < /dev/null 9>&- &
pid=$!
echo "$pid" > "$NETLAB_STATE/delayline.pid"
for _ in $(seq 100); do
  grep -q "^delayline: ready" "$NETLAB_STATE/delayline.log" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
grep -q "^delayline: ready" "$NETLAB_STATE/delayline.log" || { echo "netlab: the delay line did not start" >&2; false; }

cat > "$NETLAB_STATE/config" <<CONFIG
hosts=$hosts
rate=$rate
rate_bps=$rate_bps
delay=$delay
delay_us=$delay_us
subnet=$NETLAB_SUBNET.0/24
first_address=$NETLAB_SUBNET.1
host_prefix=$NETLAB_HOST_PREFIX
hub=$NETLAB_HUB
delayline_pid=$pid
slow_start_after_idle=${slow_start:-kernel default}
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
CONFIG

# Check: host 0 reaches host N-1. ping -U times user space to user space: the kernel's receive
# timestamp, ping's default, is taken before the delay line and would show about one DELAY.
last="$NETLAB_SUBNET.$hosts"
if ! result=$(ip netns exec "${names[0]}" ping -U -q -n -c 3 -i 0.05 -W 2 "$last" 2>&1); then
  echo "netlab: ${names[0]} cannot reach $last:" >&2
  echo "$result" | sed 's/^/  /' >&2
  false
fi
trap - ERR
echo "netlab: $hosts hosts up, rate $rate ($rate_bps bit/s) per direction, one-way delay $delay; state in $NETLAB_STATE"
echo "netlab: ping ${names[0]} -> ${names[$((hosts - 1))]}: $(echo "$result" | tail -1)"
