#!/usr/bin/env bash
# two_hosts.sh [--expect-ipc] [--across ROUTE] MPIRUN LIBRARY PROGRAM [ARGS...]: runs PROGRAM on 4 ranks over
# two test hosts on this machine (../shared/TEST_HOSTS.md: network namespaces
# joined by a veth pair, Open MPI launching through an rsh agent), mapped by
# node so that neighbouring ranks are on different nodes; CUDA IPC must
# decline between them and ROUTE (ucx or staged; ucx by default in builds
# with UCX) carry large device messages across. Every CUMPI_* and UCX_*
# variable set here goes to the ranks. Passes when PROGRAM passes and the
# route log shows ROUTE between nodes (and, with --expect-ipc, CUDA IPC
# within a node). Sets the hosts up and tears them down itself; exits 77
# (skipped) where it cannot.
set -uo pipefail
expect_ipc=0 across=staged
while [[ "${1:-}" == --* ]]; do
  case $1 in
    --expect-ipc) expect_ipc=1; shift ;;
    --across) across=$2; shift 2 ;;
    *) echo "two_hosts.sh: unknown option $1"; exit 2 ;;
  esac
done
mpirun=$1 library=$2
shift 2
skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
command -v ip > /dev/null && command -v unshare > /dev/null || skip "needs ip (iproute2) and unshare"
"$mpirun" --version 2>&1 | grep -q "Open MPI" || skip "needs Open MPI's rsh launcher"

tag=$$
h1=cumpih1$tag h2=cumpih2$tag
work=$(mktemp -d)
cleanup() {
  ip netns del "$h1" 2> /dev/null
  ip netns del "$h2" 2> /dev/null
  sed -i "/# cumpi-two-hosts-$tag\$/d" /etc/hosts
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$h1" && ip netns add "$h2" || skip "cannot create network namespaces here"
ip link add "veth1$tag" type veth peer name "veth2$tag" || skip "cannot create a veth pair here"
ip link set "veth1$tag" netns "$h1" && ip link set "veth2$tag" netns "$h2"
ip -n "$h1" addr add 10.77.0.1/24 dev "veth1$tag" && ip -n "$h2" addr add 10.77.0.2/24 dev "veth2$tag"
for n in "$h1" "$h2"; do ip -n "$n" link set lo up; done
ip -n "$h1" link set "veth1$tag" up && ip -n "$h2" link set "veth2$tag" up
printf '10.77.0.1 h1 # cumpi-two-hosts-%s\n10.77.0.2 h2 # cumpi-two-hosts-%s\n' "$tag" "$tag" >> /etc/hosts

cat > "$work/agent" << AGENT
#!/bin/bash
while [[ "\$1" == -* ]]; do shift; done
host=\$1; shift
[ "\$host" = h1 ] && ns=$h1 || ns=$h2
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$host; \$*"
AGENT
chmod +x "$work/agent"

forwarded=
for name in $(compgen -e | grep -E '^(CUMPI|UCX)_' | grep -vx CUMPI_LOG); do forwarded+=" -x $name"; done
command="$mpirun --allow-run-as-root --oversubscribe --host h1:2,h2:2 -np 4 --map-by node \
  --mca plm_rsh_agent $work/agent --mca btl tcp,self,vader \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  -x LD_PRELOAD=$library -x CUMPI_LOG=info $forwarded $*"
timeout --kill-after=10 600 ip netns exec "$h1" unshare --uts sh -c "hostname h1; $command" 2>&1 | tee "$work/log"
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { echo "FAILED: the program exited with $status"; exit 1; }
case $across in
  ucx) crossed="take ucx" ;;
  staged) crossed="take staged, pushed by the sender" ;;
  *) echo "two_hosts.sh: --across takes ucx or staged"; exit 2 ;;
esac
grep -q "$crossed" "$work/log" || { echo "FAILED: no message crossed the nodes by $across"; exit 1; }
if [ "$expect_ipc" = 1 ]; then
  grep -q "take cuda_ipc" "$work/log" || { echo "FAILED: no message took CUDA IPC within a node"; exit 1; }
fi
echo "two hosts: passed"
