#!/usr/bin/env bash
# ends_without_hang.sh SECONDS COMMAND...: runs COMMAND (a launch under
# run_launched.sh with a time limit of SECONDS) for a fault test, where the
# job may end in an error but must end: fails only when COMMAND ran into its
# time limit; exit 77 (skipped) passes through. (Its exit status cannot say: mpirun itself exits 137 when a
# rank was killed by SIGKILL.)
limit=$1
shift
started=$SECONDS
"$@"
rc=$?
took=$((SECONDS - started))
[ "$rc" = 77 ] && exit 77  # the command skipped itself
if [ "$took" -ge "$limit" ]; then
  echo "HUNG: the job ran $took s, into its time limit of $limit s (exit $rc)"
  exit 1
fi
echo "ended without a hang in $took s (exit $rc)"
