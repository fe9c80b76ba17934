#!/usr/bin/env bash
# tools_work.sh CUMPI_INFO CUMPI_PLOT MPIRUN LIBCUMPI CUMPI_BENCH: the
# installed tools do what their help says.
# - cumpi-info names the version, the MPI library and every knob with its
#   source; --json is valid JSON with the same knobs; a set variable shows
#   as coming from the environment.
# - cumpi-plot draws PNGs from a benchmark's CSV, one per pair and figure.
set -euo pipefail
info=$1 plot=$2 mpirun=$3 library=$4 bench=$5
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 passed=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}" > /dev/null 2>&1; then passed=$((passed + 1)); else echo "FAILED: $1"; failed=$((failed + 1)); fi
}
CUMPI_LOG=info "$info" > "$work/info.txt"
CUMPI_LOG=info "$info" --json > "$work/info.json"
knobs=$(grep -c '^CUMPI_CONFIG(' "$here/../src/runtime/config_table.def")
check "text: the version" grep -qE "^cumpi [0-9]+\.[0-9]+\.[0-9]+" "$work/info.txt"
check "text: the MPI library" grep -qE "MPI library: .*(Open MPI|MPICH)" "$work/info.txt"
check "text: a set knob is from the environment" grep -q "CUMPI_LOG=info (environment)" "$work/info.txt"
check "text: every knob" test "$(grep -cE '^  CUMPI_[A-Z_]+=.* \((default|environment)\)' "$work/info.txt")" = "$knobs"
check "text: routes to other nodes" grep -qE "ranks on other nodes: (ucx|staged)" "$work/info.txt"
check "json: valid" python3 -m json.tool "$work/info.json"
check "json: every knob, the set one from the environment" python3 -c "
import json, sys
report = json.load(open('$work/info.json'))
settings = {s['name']: s for s in report['settings']}
sys.exit(0 if len(settings) == $knobs and settings['CUMPI_LOG']['source'] == 'environment'
         and settings['CUMPI_LOG']['value'] == 'info' and report['version'] else 1)"
"$here/run_launched.sh" "$mpirun" 2 120 "$library" "$bench" --pairs hh,dd --allreduce 0 --max 65536 \
  --csv "$work/bench.csv" > "$work/bench.txt" 2>&1
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  "$plot" --out "$work/png" cumpi="$work/bench.csv" > "$work/plot.txt"
  check "plot: a PNG per pair and figure" test "$(grep -c '\.png$' "$work/plot.txt")" = 4
  check "plot: PNG files" bash -c "for f in $work/png/*.png; do head -c 8 \"\$f\" | od -An -c | grep -q 'P   N   G' || exit 1; done"
else
  echo "FAILED: cumpi-plot not tried: python3-matplotlib is missing"
  failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
