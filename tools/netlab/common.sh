# ddlsim netlab: names, state and unit parsing shared by setup.sh, teardown.sh and status.sh.
# Sourced, not run.

NETLAB_STATE=${DDLSIM_NETLAB_STATE:-/run/ddlsim-netlab}  # what setup.sh recorded (teardown.sh reads it)
NETLAB_LOCK=/run/ddlsim-netlab.lock                       # serialises setups and teardowns
NETLAB_HUB=ddl-hub                                        # the namespace of the switch (a bridge)
NETLAB_HOST_PREFIX=ddl-w                                  # host i is namespace ddl-w<i>
NETLAB_SUBNET=10.78.0                                     # host i has address 10.78.0.<i+1>/24
NETLAB_QUEUE=0                                            # the NFQUEUE number of the delay line
NETLAB_MAX_HOSTS=64

netlab_die() {  # netlab_die STATUS MESSAGE: one line on stderr, then exit STATUS
  echo "netlab: $2" >&2
  exit "$1"
}

# The iptables that speaks the legacy kernel tables (the NFQUEUE rule lives in the raw table).
netlab_iptables() {
  if command -v iptables-legacy >/dev/null; then echo iptables-legacy
  elif command -v iptables >/dev/null; then echo iptables
  else return 1
  fi
}

# netlab_rate_bps TEXT: a rate in bits/s, printed as an integer. ddlsim's units (25Gbps, 100Mbps,
# 1bps in bits/s; 3.125GBps, 12.5MBps, 1MiBps in bytes/s) and tc's kbit, mbit, gbit. Fails on
# anything else, zero included.
netlab_rate_bps() {
  awk -v text="$1" 'BEGIN {
    if (!match(text, /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?/)) exit 1
    value = substr(text, 1, RLENGTH) + 0; unit = substr(text, RLENGTH + 1)
    split("bps 1 Kbps 1e3 Mbps 1e6 Gbps 1e9 Tbps 1e12 bit 1 kbit 1e3 mbit 1e6 gbit 1e9 " \
          "Bps 8 KBps 8e3 MBps 8e6 GBps 8e9 TBps 8e12 KiBps 8192 MiBps 8388608 GiBps 8589934592", table, " ")
    for (i = 1; i < 40; i += 2) if (table[i] == unit) factor = table[i + 1]
    if (factor == "" || value <= 0) exit 1
    printf "%.0f\n", value * factor
  }'
}

# netlab_delay_us TEXT: a one-way delay in microseconds (ddlsim's units: 5ms, 500us, 0.1s, 2000ns;
# a bare 0 is accepted), printed as a decimal number.
netlab_delay_us() {
  awk -v text="$1" 'BEGIN {
    if (text == "0") { print 0; exit 0 }
    if (!match(text, /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?/)) exit 1
    value = substr(text, 1, RLENGTH) + 0; unit = substr(text, RLENGTH + 1)
    if (unit == "ns") f = 1e-3; else if (unit == "us") f = 1; else if (unit == "ms") f = 1e3; else if (unit == "s") f = 1e6
    else exit 1
    printf "%.3f\n", value * f
  }'
}

# Removes everything a setup recorded under $NETLAB_STATE: stops the delay line by its recorded PID
# (only if that PID still runs the delay line), deletes the recorded namespaces (which deletes their
# veths, bridge, qdiscs and iptables rules with them), then the state. Safe on a partial setup and
# when nothing was set up. The caller holds the lock.
netlab_teardown() {
  local pid ns
  if [ -f "$NETLAB_STATE/delayline.pid" ]; then
    pid=$(cat "$NETLAB_STATE/delayline.pid")
    if [[ "$pid" =~ ^[0-9]+$ ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q delayline; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
      echo "netlab: stopped the delay line (pid $pid)"
    fi
    rm -f "$NETLAB_STATE/delayline.pid"
  fi
  if [ -f "$NETLAB_STATE/namespaces" ]; then
    while read -r ns; do
      [ -n "$ns" ] || continue
      if ip netns del "$ns" 2>/dev/null; then echo "netlab: deleted namespace $ns"; fi
    done < "$NETLAB_STATE/namespaces"
    rm -f "$NETLAB_STATE/namespaces"
  fi
  rm -f "$NETLAB_STATE/config" "$NETLAB_STATE/delayline.log"
  rmdir "$NETLAB_STATE" 2>/dev/null || true
}
