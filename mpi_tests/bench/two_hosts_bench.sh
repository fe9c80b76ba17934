#!/usr/bin/env bash
# two_hosts_bench.sh BUILD_DIR LIBRARY [OUT_DIR]: device->device bandwidth
# between two test hosts on this machine (network namespaces over a veth
# pair, TCP; mpi_tests/common/test_hosts.sh), one rank on each, in one run:
#   - UCX's own host-memory bandwidth over that link (ucx_perftest tag_bw,
#     UCX_TLS=tcp): the link's floor for ucx;
#   - cumpi_bench dd and hh with the default transports (ucx between the
#     hosts) and with CUMPI_TRANSPORTS=cuda_ipc,staged (the staged pipeline
#     over the host MPI's TCP);
# in TWO_HOSTS_BENCH_ROUNDS rounds (3), then the medians of the rounds'
# ratios at the largest size (64 MiB; TWO_HOSTS_BENCH_BYTES) the ucx
# transport is held to: ucx >= 0.85x the UCX host floor, and ucx >= the
# staged pipeline. The pinned device->host copy
# floor is cumpi_bench's own "floor" row where the memory is CUDA's.
# Exits 77 where the hosts cannot be made. CSV files go to OUT_DIR.
set -uo pipefail
build=$(cd "$1" && pwd)
library=$2
out=${3:-$(mktemp -d)}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "SKIPPED: $*"; exit 77; }
command -v ucx_perftest > /dev/null || skip "needs ucx_perftest (ucx-utils)"
[[ $(mpirun --version 2>&1) == *"Open MPI"* ]] || skip "needs Open MPI's rsh launcher"
source "$here/common/test_hosts.sh"
make_test_hosts
hosts_limit=300
bytes=${TWO_HOSTS_BENCH_BYTES:-67108864}  # the largest size, where the ratios are taken

rounds=${TWO_HOSTS_BENCH_ROUNDS:-3}  # the floor and both routes in turn, each round: the link's speed drifts

perftest() {  # perftest ROUND: UCX's own host-memory bandwidth, GB/s
  UCX_TLS=tcp in_h2_background "timeout 120 ucx_perftest > $out/perftest_server_$1.log 2>&1"
  sleep 2
  UCX_TLS=tcp in_h1 "ucx_perftest $h2_address -t tag_bw -s $bytes -n 20" > "$out/perftest_$1.log" 2>&1
  wait
  # Final: iterations, overhead 50%/average/overall, bandwidth (MB/s) average, overall, ...
  awk '/^Final:/ {printf "%.3f", $6 / 1000}' "$out/perftest_$1.log"
}
bench() {  # bench NAME [VAR=VALUE...]: the variables go to the ranks
  local name=$1
  shift
  (
    export UCX_TLS=tcp,self "$@"
    mpirun_across mpirun 1 -x LD_PRELOAD="$library" "$build/mpi_tests/cumpi_bench" --pairs dd,hh --allreduce 0 \
      --min "${TWO_HOSTS_BENCH_MIN:-1048576}" --max "$bytes" --factor 4 --csv "$out/$name.csv"
  ) > "$out/$name.log" 2>&1 || { echo "FAILED: cumpi_bench ($name)"; tail -20 "$out/$name.log"; exit 1; }
}
gbps() { awk -v pair="$2" -v size="$bytes" '$1 == "p2p" && $2 == pair && $3 == size {print $6}' "$out/$1.log"; }
median() {
  tr ' ' '\n' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

floor_ratios= staged_ratios=
echo "two hosts over TCP, $bytes bytes, GB/s, $rounds rounds:"
for round in $(seq "$rounds"); do
  ucx_floor=$(perftest "$round")
  [ -n "$ucx_floor" ] || { echo "FAILED: ucx_perftest gave no figure"; cat "$out/perftest_$round.log"; exit 1; }
  bench "ucx_$round"
  bench "staged_$round" CUMPI_TRANSPORTS=cuda_ipc,staged
  ucx_dd=$(gbps "ucx_$round" dd) staged_dd=$(gbps "staged_$round" dd) host_mpi=$(gbps "ucx_$round" hh)
  echo "  round $round: ucx_perftest host $ucx_floor, host MPI $host_mpi, cumpi dd: ucx $ucx_dd, staged $staged_dd"
  floor_ratios+=" $(awk -v u="$ucx_dd" -v f="$ucx_floor" 'BEGIN {print u / f}')"
  staged_ratios+=" $(awk -v u="$ucx_dd" -v s="$staged_dd" 'BEGIN {print u / s}')"
done
for name in "ucx_$rounds" "staged_$rounds"; do
  echo "--- cumpi_bench, $name"
  grep -E '^(test|p2p|floor)' "$out/$name.log"
done
echo "ratios by round: ucx / UCX host floor$floor_ratios; ucx / staged$staged_ratios"
awk -v f="$(echo $floor_ratios | median)" -v s="$(echo $staged_ratios | median)" 'BEGIN {
  printf "ucx / UCX host floor = %.2f (goal >= 0.85), ucx / staged = %.2f (goal >= 1), medians of the rounds\n", f, s }'
