#!/usr/bin/env bash
# lammps_melt.sh MPIRUN LIBCUMPI: the LAMMPS melt example on 2 ranks, with and
# without cumpi preloaded; the thermo output must be identical.
set -euo pipefail
mpirun=$1 library=$2
lmp=$(command -v lmp || command -v lmp_openmpi || true)
example=/usr/share/lammps/examples/melt/in.melt
if [ -z "$lmp" ] || [ ! -f "$example" ]; then
  echo "LAMMPS is not installed (Debian package lammps): skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$example" "$work/"
cd "$work"
args=(--oversubscribe -np 2 --mca btl self,vader)
if [ "$(id -u)" = 0 ]; then args+=(--allow-run-as-root); fi
thermo() { sed -n '/^ *Step /,/^Loop time/p' "$1" | grep -v '^Loop time'; }
timeout 300 "$mpirun" "${args[@]}" "$lmp" -in in.melt -log none > plain.txt
timeout 300 "$mpirun" "${args[@]}" -x LD_PRELOAD="$library" -x CUMPI_STATS=1 "$lmp" -in in.melt -log none \
  > preloaded.txt 2> stats.txt
thermo plain.txt > plain.thermo
thermo preloaded.txt > preloaded.thermo
lines=$(wc -l < plain.thermo)
if [ "$lines" -lt 3 ]; then
  echo "no thermo output from LAMMPS"; cat plain.txt; exit 1
fi
grep -q "cumpi-stats" stats.txt || { echo "cumpi was not loaded into the LAMMPS ranks"; cat stats.txt; exit 1; }
if ! diff plain.thermo preloaded.thermo; then
  echo "thermo output differs under cumpi"; exit 1
fi
echo "thermo output identical with and without cumpi ($lines lines)"
echo "1 passed, 0 failed"
