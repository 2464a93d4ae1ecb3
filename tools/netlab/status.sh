#!/usr/bin/env bash
# ddlsim netlab: prints the lab's recorded configuration and whether it is up (its namespaces exist
# and its delay line runs). Exit 0 when a lab is up, 1 when none is (or it is broken), 2 on arguments.
# `setup.sh --check` says instead whether a lab can be built here at all.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"
[ $# -eq 0 ] || netlab_die 2 "status.sh takes no arguments"
if [ ! -f "$NETLAB_STATE/config" ]; then
  echo "netlab: no lab is set up (nothing recorded in $NETLAB_STATE)"
  exit 1
fi
cat "$NETLAB_STATE/config"
broken=""
while read -r ns; do
  [ -e "/run/netns/$ns" ] || broken="$broken namespace $ns is missing;"
done < "$NETLAB_STATE/namespaces"
pid=$(cat "$NETLAB_STATE/delayline.pid" 2>/dev/null || echo none)
tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q delayline || broken="$broken the delay line (pid $pid) is not running;"
if [ -n "$broken" ]; then
  echo "netlab: broken:$broken run setup.sh again or teardown.sh"
  exit 1
fi
echo "netlab: up"
