#!/usr/bin/env bash
# two_hosts.sh [--expect-ipc] [--across ROUTE] [--expect TEXT] MPIRUN LIBRARY PROGRAM [ARGS...]:
# runs PROGRAM on 4 ranks over two test hosts on this machine
# (../shared/TEST_HOSTS.md: network namespaces joined by a veth pair, or
# hostnames alone over loopback where namespaces cannot be had; Open MPI
# launching through an rsh agent), mapped by node so that neighbouring
# ranks are on different nodes; CUDA IPC must decline between them and ROUTE
# (ucx or staged; ucx by default in builds with UCX) carry large device
# messages across. Every CUMPI_* and UCX_* variable set here goes to the
# ranks. Passes when PROGRAM passes and the route log shows ROUTE between
# nodes (--across none: no route asked for, for programs that make only
# collective calls), with --expect-ipc CUDA IPC within a node, and with
# --expect TEXT in the log. Sets the hosts up and tears them down itself;
# exits 77 (skipped) where it cannot.
set -uo pipefail
expect_ipc=0 across=staged expected=
while [[ "${1:-}" == --* ]]; do
  case $1 in
    --expect-ipc) expect_ipc=1; shift ;;
    --across) across=$2; shift 2 ;;
    --expect) expected=$2; shift 2 ;;
    *) echo "two_hosts.sh: unknown option $1"; exit 2 ;;
  esac
done
mpirun=$1 library=$2
shift 2
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $("$mpirun" --version 2>&1) == *"Open MPI"* ]] || skip "needs Open MPI's rsh launcher"
source "$(dirname "$0")/common/test_hosts.sh"
make_test_hosts
hosts_limit=${TWO_HOSTS_LIMIT:-600}

log=$hosts_work/log
echo "test hosts: $hosts_kind" > "$log"
CUMPI_LOG=info mpirun_across "$mpirun" 2 -x LD_PRELOAD="$library" "$@" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { echo "FAILED: the program exited with $status"; exit 1; }
case $across in
  ucx) crossed="take ucx" ;;
  staged) crossed="take staged, pushed by the sender" ;;
  none) crossed= ;;
  *) echo "two_hosts.sh: --across takes ucx, staged or none"; exit 2 ;;
esac
if [ -n "$crossed" ]; then
  grep -q "$crossed" "$log" || { echo "FAILED: no message crossed the nodes by $across"; exit 1; }
fi
if [ -n "$expected" ]; then
  grep -qF "$expected" "$log" || { echo "FAILED: the log does not say: $expected"; exit 1; }
fi
if [ "$expect_ipc" = 1 ]; then
  grep -q "take cuda_ipc" "$log" || { echo "FAILED: no message took CUDA IPC within a node"; exit 1; }
fi
echo "two hosts: passed"
