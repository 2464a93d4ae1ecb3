#!/usr/bin/env bash
# Compiles the lab's delay line (tools/netlab/delayline.c) into build-netlab/delayline, or into
# $DDLSIM_NETLAB_BUILD when that is set. Re-running is cheap: it compiles only when the source is
# newer than the binary. Prints the binary's path on stdout.
#
# Needs gcc and libnetfilter-queue-dev: `tools/install-deps.sh --netlab` installs them.
# Exit 1 when a dependency is missing or the compiler fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${DDLSIM_NETLAB_BUILD:-$root/build-netlab}"
binary="$out/delayline"
source="$here/delayline.c"

if [ -x "$binary" ] && [ "$binary" -nt "$source" ]; then
  echo "$binary"
  exit 0
fi
command -v gcc >/dev/null || { echo "netlab build: gcc is missing (run tools/install-deps.sh --netlab)" >&2; exit 1; }
if [ ! -f /usr/include/libnetfilter_queue/libnetfilter_queue.h ]; then
  echo "netlab build: libnetfilter-queue-dev is missing (run tools/install-deps.sh --netlab)" >&2
  exit 1
fi
mkdir -p "$out"
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$binary.tmp" "$source" -lnetfilter_queue
mv -f "$binary.tmp" "$binary"
echo "$binary"
