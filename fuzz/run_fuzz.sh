#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (docs/reliability.md, "Fuzzing"):
#   fuzz/run_fuzz.sh TARGET_BINARY SECONDS CORPUS_DIR SEED_DIR... [-- libFuzzer options]
# CORPUS_DIR (created) collects the inputs that found new coverage; the seed folders are read only.
# Crashes, sanitizer reports, uncaught exceptions, refusals that are not one bounded line (abort) and
# inputs slower than 10 s are findings: libFuzzer writes the input to CORPUS_DIR/../findings-TARGET-*
# and exits non-zero. Prints the execution count libFuzzer reports at the end.
set -euo pipefail
target=$1 seconds=$2 corpus=$3
shift 3
seeds=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do seeds+=("$1"); shift; done
[ $# -gt 0 ] && shift
name=$(basename "$target")
mkdir -p "$corpus"
findings="$(dirname "$corpus")/findings-$name-"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
start=$SECONDS
"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$findings" "$@" "$corpus" "${seeds[@]}" </dev/null >"$log" 2>&1
rc=$?
elapsed=$((SECONDS - start))
set -e
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
if [ $rc -ne 0 ]; then
  tail -n 60 "$log"
  echo "run_fuzz: $name: FINDING after ${runs:-?} executions (exit $rc); the input is under ${findings}*" >&2
  exit 1
fi
echo "run_fuzz: $name: ${runs:-?} executions in ${elapsed} s without a finding; corpus $(ls "$corpus" | wc -l) inputs"
