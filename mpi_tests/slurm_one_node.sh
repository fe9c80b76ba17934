#!/usr/bin/env bash
# slurm_one_node.sh BUILD: a one-node Slurm of this machine (munge,
# slurmctld, slurmd from Debian's slurm-wlm, a minimal slurm.conf written
# here), then, as users would:
# - sbatch --wait slurm/cumpi_tests.sbatch BUILD (emulated device memory on a
#   machine without a GPU);
# - srun -n 4 --export=ALL,LD_PRELOAD=... of a launched test.
# The daemons are stopped at the end, whatever happened. Needs root and
# slurm-wlm; without them it says so and exits 77 (ctest: skipped).
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "slurm_one_node.sh needs root (slurmd): skipped"; exit 77; }
command -v slurmctld > /dev/null && command -v munged > /dev/null ||
  { echo "slurm-wlm and munge are not installed: skipped"; exit 77; }
work=$(mktemp -d /tmp/cumpi-slurm.XXXXXX)
node=$(hostname -s)
cpus=$(nproc)
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  sleep 1
  for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap stop EXIT
mkdir -p "$work/state" "$work/spool" "$work/munge" "$work/run"
# munge: a key of its own, its socket in the work directory.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --foreground --key-file="$work/munge/munge.key" --socket="$work/run/munge.socket" \
  --pid-file="$work/run/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" \
  > "$work/munged.out" 2>&1 &
pids+=($!)
cat > "$work/slurm.conf" <<CONF
ClusterName=cumpi
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/run/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$node CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$work/slurm.conf
sleep 1
slurmctld -D -i > "$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D > "$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  sinfo -h -o %T 2> /dev/null | grep -qE "^idle" && break
  sleep 1
done
sinfo -h -o %T | grep -qE "^idle" || { echo "the node did not come up"; cat "$work/slurmctld.log" "$work/slurmd.log"; exit 1; }
failed=0
echo "== sbatch --wait slurm/cumpi_tests.sbatch"
(cd "$work" && sbatch --wait -o "$work/batch.out" "$here/slurm/cumpi_tests.sbatch" "$build") || failed=$((failed + 1))
grep -E "^(==|cumpi tests|[0-9]+ passed|failing steps)" "$work/batch.out"
grep -qE "^failing steps: 0$" "$work/batch.out" || failed=$((failed + 1))
echo "== srun -n 4 p2p_semantics"
srun --mpi=pmix -n 4 --overcommit --export=ALL,LD_PRELOAD="$build/src/libcumpi_emu.so" \
  "$build/mpi_tests/p2p_semantics" > "$work/srun.out" 2>&1 || failed=$((failed + 1))
tail -3 "$work/srun.out"
grep -qE "^[0-9]+ passed, 0 failed" "$work/srun.out" || failed=$((failed + 1))
echo "$((4 - failed)) passed, $failed failed"
[ "$failed" = 0 ]
