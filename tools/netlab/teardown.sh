#!/usr/bin/env bash
# ddlsim netlab: removes the lab that setup.sh built, by the names and PIDs it recorded under
# /run/ddlsim-netlab/ (docs/validation.md, "Lab"). Safe to run any number of times; touches
# nothing it did not record. Needs root. Exit 0 when nothing of the lab is left, 2 on arguments.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"
case "${1:-}" in
  "") ;;
  -h|--help) echo "usage: teardown.sh   (removes the lab recorded in $NETLAB_STATE)"; exit 0 ;;
  *) netlab_die 2 "teardown.sh takes no arguments (usage: teardown.sh)" ;;
esac
[ "$(id -u)" = 0 ] || netlab_die 1 "teardown.sh must run as root"
exec 9>"$NETLAB_LOCK"
flock 9
netlab_teardown
