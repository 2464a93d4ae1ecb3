#!/usr/bin/env bash
# Installs ddlsim's build and test dependencies from Debian packages.
# Idempotent: packages already present are skipped; needs root (or sudo).
set -euo pipefail
packages=(cmake g++ make pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libfmt-dev libeigen3-dev
          doctest-dev libcli11-dev python3 python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
