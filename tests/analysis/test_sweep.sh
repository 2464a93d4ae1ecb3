#!/usr/bin/env bash
# End-to-end test of the analysis scripts: analysis/sweep.py, plot_speedup.py, plot_timeline.py.
#   bash tests/analysis/test_sweep.sh build/ddlsim
# Exits non-zero on the first failure; removes its temporary directory in every case.
# The scripts run under /usr/bin/python3 (Debian's, which has python3-matplotlib; a pyenv python3
# first on PATH may not); set PYTHON to use another interpreter.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 PATH/TO/ddlsim" >&2
  exit 2
fi
DDLSIM=$(realpath "$1")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

[[ -x "$DDLSIM" ]] || fail "$DDLSIM is not an executable"
"$PY" -c "import matplotlib" 2>/dev/null ||
  fail "$PY cannot import matplotlib (apt-get install -y python3-matplotlib)"
cd "$ROOT"

is_png() { [[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]]; }

echo "--- sweep"
"$PY" analysis/sweep.py scenarios/default.json --grid platform.workers=1,2,4 --set workload.iterations=2 \
  --fidelity analytic -j 2 --ddlsim "$DDLSIM" --out "$TMP/sweep" 2>"$TMP/sweep.log" ||
  { cat "$TMP/sweep.log" >&2; fail "sweep.py exited non-zero"; }
cat "$TMP/sweep.log"
[[ -f "$TMP/sweep/sweep.csv" ]] || fail "no sweep.csv"
"$PY" - "$TMP/sweep/sweep.csv" <<'EOF' || fail "sweep.csv content"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 3, f"expected 3 data rows, got {len(rows)}"
workers = [int(r["workers"]) for r in rows]
assert workers == [1, 2, 4], f"workers column {workers}"
assert [r["platform.workers"] for r in rows] == ["1", "2", "4"], "grid column"
speedup = [float(r["speedup"]) for r in rows]
assert abs(speedup[0] - 1) <= 1e-9, f"speedup at 1 worker is {speedup[0]!r}"
assert all(b > a for a, b in zip(speedup, speedup[1:])), f"speedup does not increase: {speedup}"
assert all(r["fidelity"] == "analytic" for r in rows), "fidelity column"
assert all(r["sync_model"] == "bsp" and r["collective"] == "ring" for r in rows), "sync_model, collective columns"
print(f"sweep.csv ok: speedup {speedup}")
EOF
for p in 1 2 4; do
  [[ -f "$TMP/sweep/points/platform.workers=$p/summary.json" ]] || fail "no summary for workers=$p"
  [[ ! -e "$TMP/sweep/points/platform.workers=$p/timeline.json" ]] || fail "sweep points should not write timelines"
done

echo "--- sweep again: every point cached"
"$PY" analysis/sweep.py scenarios/default.json --grid platform.workers=1,2,4 --set workload.iterations=2 \
  --fidelity analytic -j 2 -v --ddlsim "$DDLSIM" --out "$TMP/sweep" 2>"$TMP/again.log" || fail "resumed sweep"
[[ $(grep -c '(cached)' "$TMP/again.log") -eq 3 ]] || { cat "$TMP/again.log" >&2; fail "points were not reused"; }

echo "--- bad --grid syntax: exit 2"
rc=0
"$PY" analysis/sweep.py scenarios/default.json --grid platform.workers --ddlsim "$DDLSIM" \
  --out "$TMP/bad" 2>"$TMP/bad.log" || rc=$?
[[ $rc -eq 2 && $(wc -l <"$TMP/bad.log") -eq 1 ]] || { cat "$TMP/bad.log" >&2; fail "bad --grid gave rc=$rc"; }

echo "--- a failing point: exit 2, the others still in the csv"
rc=0
"$PY" analysis/sweep.py scenarios/default.json --grid platform.link.bandwidth=10Gbps,10furlongs \
  --set workload.iterations=1 --fidelity analytic -j 2 --ddlsim "$DDLSIM" --out "$TMP/partial" \
  2>"$TMP/partial.log" || rc=$?
[[ $rc -eq 2 ]] || { cat "$TMP/partial.log" >&2; fail "failing point gave rc=$rc"; }
grep -q "ddlsim: error" "$TMP/partial.log" || fail "ddlsim's stderr not shown"
[[ $(tail -n +2 "$TMP/partial/sweep.csv" | wc -l) -eq 1 ]] || fail "csv should hold the one successful point"
grep -q '^10Gbps,' "$TMP/partial/sweep.csv" || fail "successful point missing from csv"

echo "--- plot_speedup"
"$PY" analysis/plot_speedup.py "$TMP/sweep/sweep.csv" --output "$TMP/speedup.png" || fail "plot_speedup.py"
is_png "$TMP/speedup.png" || fail "speedup.png is not a PNG"

echo "--- plot_timeline"
"$DDLSIM" run scenarios/default.json --set workload.iterations=2 --out "$TMP/t" --quiet || fail "ddlsim run"
[[ -f "$TMP/t/timeline.json" ]] || fail "no timeline.json"
"$PY" analysis/plot_timeline.py "$TMP/t/timeline.json" --output "$TMP/timeline.png" || fail "plot_timeline.py"
is_png "$TMP/timeline.png" || fail "timeline.png is not a PNG"

echo "PASS"
