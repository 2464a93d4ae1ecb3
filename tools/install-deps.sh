#!/usr/bin/env bash
# Installs ddlsim's build and test dependencies from Debian packages.
# Idempotent: packages already present are skipped; needs root (or sudo).
set -euo pipefail
# --training-tools also installs what the tools that train real models need (tools/record_training.py,
# measure_gain.py, measure_compressors.py, profile_torch.py): their tests run instead of skipping.
# --netlab installs what the one-machine network lab needs (tools/netlab/, docs/validation.md): iptables
# and libnetfilter-queue for the delay line, iproute2 for namespaces and shaping, ping for its check,
# gcc to build the delay line, and torch and torchvision (the DDP grid's resnet18) for the measurement tools. --slurm installs Slurm (slurmctld,
# slurmd, the client commands) and munge, which the one-node cluster of tests/analysis/test_slurm.py
# starts (label slurm; analysis/sweep.py --slurm). --check installs clang 16 and libFuzzer, which the
# sanitizer and fuzzing tree needs (-DDDLSIM_SANITIZE, -DDDLSIM_FUZZ; docs/reliability.md). Flags combine.
packages=(cmake g++ make pkg-config libsimgrid-dev libboost-graph-dev libboost-context-dev nlohmann-json3-dev libfmt-dev libeigen3-dev
          libjemalloc-dev libns3-dev doctest-dev libcli11-dev zlib1g-dev dataset-fashion-mnist python3 python3-matplotlib)
for flag in "$@"; do
  case "$flag" in
    --training-tools) packages+=(python3-torch python3-sklearn python3-scipy) ;;
    --netlab) packages+=(iptables libnetfilter-queue-dev iproute2 iputils-ping gcc python3-torch python3-torchvision) ;;
    --slurm) packages+=(slurm-wlm munge) ;;
    --check) packages+=(clang-16 libclang-rt-16-dev libfuzzer-16-dev) ;;
    *) echo "install-deps: unknown option $flag (valid: --training-tools, --netlab, --slurm, --check)" >&2; exit 2 ;;
  esac
done
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
