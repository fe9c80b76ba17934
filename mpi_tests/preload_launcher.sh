#!/usr/bin/env bash
# preload_launcher.sh MPIRUN LIBCUMPI PROGRAM: libcumpi must be harmless where
# it is preloaded into what is not an MPI program (a shell, mpirun itself),
# and must unset OMPI_MCA_opal_cuda_support, which crashes a non-CUDA Open MPI.
set -euo pipefail
mpirun=$1 library=$2 program=$3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
inside=$(LD_PRELOAD=$library OMPI_MCA_opal_cuda_support=1 sh -c 'echo "[$OMPI_MCA_opal_cuda_support]"')
[ "$inside" = "[]" ] || { echo "OMPI_MCA_opal_cuda_support was not unset: $inside"; exit 1; }
LD_PRELOAD=$library /bin/true || { echo "preloading into /bin/true failed"; exit 1; }
args=(--oversubscribe -np 2 --mca btl self,vader)
if [ "$(id -u)" = 0 ]; then args+=(--allow-run-as-root); fi
# The way users often write it: the whole launch under the preload.
LD_PRELOAD=$library OMPI_MCA_opal_cuda_support=1 CUMPI_STATS=1 timeout 120 \
  "$mpirun" "${args[@]}" "$program" --memory host 2> "$log"
grep -q "cumpi-stats" "$log" || { echo "cumpi did not reach the ranks"; cat "$log"; exit 1; }
# Forwarded to the ranks only: each rank unsets it before MPI_Init and says so.
timeout 120 "$mpirun" "${args[@]}" -x LD_PRELOAD="$library" -x OMPI_MCA_opal_cuda_support=1 \
  "$program" --memory host 2> "$log"
grep -q "OMPI_MCA_opal_cuda_support=1 was unset" "$log" || { echo "no warning about opal_cuda_support"; exit 1; }
# CUMPI_DISABLE=1: everything passes straight through, no statistics.
timeout 120 "$mpirun" "${args[@]}" -x LD_PRELOAD="$library" -x CUMPI_DISABLE=1 -x CUMPI_STATS=1 \
  "$program" --memory host 2> "$log" > /dev/null
if grep -q "cumpi-stats" "$log"; then echo "CUMPI_DISABLE=1 still ran cumpi's statistics"; exit 1; fi
# A typo in a CUMPI_ variable is reported once, by rank 0.
timeout 120 "$mpirun" "${args[@]}" -x LD_PRELOAD="$library" -x CUMPI_STAT=1 "$program" --memory host \
  2> "$log" > /dev/null
[ "$(grep -c "unknown variable CUMPI_STAT is ignored: did you mean CUMPI_STATS?" "$log")" = 1 ] ||
  { echo "the typo was not reported once with the intended name"; cat "$log"; exit 1; }
echo "1 passed, 0 failed"
