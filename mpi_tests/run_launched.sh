#!/usr/bin/env bash
# run_launched.sh MPIRUN RANKS TIMEOUT PRELOAD PROGRAM [ARGS...]
# Runs PROGRAM on RANKS ranks with PRELOAD (empty: none) in LD_PRELOAD, killed
# after TIMEOUT seconds: a hung test must never hang CI. Open MPI's mpirun and
# MPICH's Hydra mpiexec both work.
set -euo pipefail
mpirun=$1 ranks=$2 limit=$3 preload=$4
shift 4
args=(-np "$ranks")
if [[ $("$mpirun" --version 2>&1) == *"Open MPI"* ]]; then
  # More ranks than cores (CI has 2); shared memory and self only: tests
  # run on one host and keep out of any network.
  args+=(--oversubscribe --mca btl self,vader)
  if [ "$(id -u)" = 0 ]; then args+=(--allow-run-as-root); fi
  [ -n "$preload" ] && args+=(-x "LD_PRELOAD=$preload")
else
  [ -n "$preload" ] && args+=(-genv LD_PRELOAD "$preload")
fi
exec timeout --kill-after=10 "$limit" "$mpirun" "${args[@]}" "$@"
