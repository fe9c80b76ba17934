#!/usr/bin/env bash
# gpu_suite.sh BUILD_DIR OUT_DIR: on a GPU machine, the launched tests on real
# cudaMalloc memory under libcumpi.so with 2 and 4 ranks (ranks share the GPUs
# there are, by local rank), the context life cycles, mpi4py with CuPy, then the
# benchmark (CSV) and the host-overhead ratio. One line per step on stdout;
# full logs under OUT_DIR.
set -uo pipefail
build=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
library=${SUITE_LIBRARY:-$build/src/libcumpi.so}  # the emulation library for a dry run without a GPU
mkdir -p "$out"
failures=0

skip=${SUITE_SKIP:-}  # an extended regex of step names not to run (a short device budget)
step() {
  local name=$1
  shift
  if [ -n "$skip" ] && [[ $name =~ $skip ]]; then
    echo "SKIP $name"
    return
  fi
  local started=$SECONDS rc=0
  "$@" > "$out/$name.log" 2>&1 || rc=$?
  if [ "$rc" = 77 ]; then
    echo "SKIPPED $name: $(grep -m1 SKIPPED "$out/$name.log")"
  elif [ "$rc" = 0 ]; then
    echo "PASS $name ($((SECONDS - started)) s): $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/$name.log" | tail -1)"
  else
    failures=$((failures + 1))
    echo "FAIL $name (exit $rc):"
    tail -n 15 "$out/$name.log"
  fi
}
launch() {  # launch RANKS TIMEOUT PROGRAM ARGS...
  local ranks=$1 limit=$2
  shift 2
  "$here/run_launched.sh" mpirun "$ranks" "$limit" "$library" "$@"
}

staged() { CUMPI_TRANSPORTS=staged "$@"; }
short_envelopes() { CUMPI_SHORT_ENVELOPES=1 "$@"; }
coll_staged() { CUMPI_COLL=staged "$@"; }
# with_mps COMMAND...: runs COMMAND with an MPS control daemon of its own
# (private pipe and log folders), stopped afterwards. Ranks that share a GPU
# share one context under MPS instead of taking turns on the GPU.
with_mps() {
  local dir
  dir=$(mktemp -d)
  export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || return 1
  "$@"
  local rc=$?
  echo quit | nvidia-cuda-mps-control
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  return $rc
}
has_mps() { command -v nvidia-cuda-mps-control > /dev/null && [ -z "${SUITE_LIBRARY:-}" ]; }
mps=  # a step's prefix: under MPS where the machine has it
if has_mps; then mps=with_mps; fi
parts=${SUITE_PARTS:-all}  # tests, coll, nbcoll, collbench, bench, hostpath, multigpu (2+ GPUs), production,
                           # stress (10^5 messages) or all

if [ "$parts" = all ] || [ "$parts" = tests ]; then
for ranks in 2 4; do
  step "p2p_matrix_np$ranks" launch "$ranks" 500 "$build/mpi_tests/p2p_matrix" --sizes 0,8,255,256,8192,65536,1048576,67108864
  step "semantics_np$ranks" launch "$ranks" 90 "$build/mpi_tests/p2p_semantics"
  step "collectives_np$ranks" launch "$ranks" 150 "$build/mpi_tests/collectives"
done
step datatype_conformance launch 2 300 "$build/mpi_tests/datatype_conformance" --seed 21 --cases 400
step datatype_conformance_staged staged launch 2 300 "$build/mpi_tests/datatype_conformance" --seed 22 --cases 200
step datatype_conformance_host_plain_mpi "$here/run_launched.sh" mpirun 2 120 "" \
  "$build/mpi_tests/datatype_conformance" --pairs hh --seed 21 --cases 400
step error_handlers launch 2 120 "$build/mpi_tests/error_handlers"
step pack_and_one_sided launch 2 120 "$build/mpi_tests/pack_and_one_sided"
step pack_and_one_sided_host_plain_mpi "$here/run_launched.sh" mpirun 2 120 "" \
  "$build/mpi_tests/pack_and_one_sided" --memory host
step thread_levels launch 2 180 "$build/mpi_tests/thread_levels" --expect-multiple 1
step thread_levels_staged_pipeline staged launch 2 180 "$build/mpi_tests/thread_levels" --expect-multiple 1
step p2p_matrix_staged_pipeline staged launch 2 300 "$build/mpi_tests/p2p_matrix" --sizes 0,256,8192,3000001,67108864
step p2p_matrix_256MiB launch 2 300 "$build/mpi_tests/p2p_matrix" --memory device --sizes 268435456
step p2p_matrix_pool_memory env TEST_DEVICE_ALLOCATOR=async CUMPI_LOG=info \
  "$here/run_launched.sh" mpirun 2 300 "$library" "$build/mpi_tests/p2p_matrix" --sizes 0,8192,1048576,67108864
step p2p_stress_np4 launch 4 300 "$build/mpi_tests/p2p_stress" --messages 10000
step p2p_matrix_np2_short_envelopes short_envelopes launch 2 300 "$build/mpi_tests/p2p_matrix" \
  --sizes 0,7,8,9,16,100,255,256,8192,1048576
step short_envelopes_take_ipc env CUMPI_STATS=1 CUMPI_SHORT_ENVELOPES=1 "$here/run_launched.sh" mpirun 2 120 \
  "$library" "$build/mpi_tests/p2p_matrix" --memory device --sizes 8,100,255
step short_envelopes_ipc_counted grep -qE "rendezvous ipc received +[1-9]" "$out/short_envelopes_take_ipc.log"
step semantics_np3_short_envelopes short_envelopes launch 3 120 "$build/mpi_tests/p2p_semantics"
step p2p_stress_np4_short_envelopes_odd_ranks launch 4 300 "$here/short_envelopes_on_odd_ranks.sh" \
  "$build/mpi_tests/p2p_stress" --messages 10000
step p2p_stress_np3_staged staged launch 3 300 "$build/mpi_tests/p2p_stress" --messages 3000
step ipc_cache_churn env CUMPI_IPC_CACHE_MAX=64 CUMPI_IPC_CACHE_MAX_BYTES=1073741824 \
  "$here/run_launched.sh" mpirun 2 300 "$library" "$build/mpi_tests/ipc_cache_churn" --iterations 10000 --max-bytes 4194304
# Two test hosts (namespaces, or hostnames over loopback): device messages
# across by ucx where the build has it, else staged; CUDA IPC within a host.
across=staged
if "$build/tools/cumpi-info" --json 2> /dev/null | grep -q '"ucx": true'; then across=ucx; fi
step two_hosts_stress env TWO_HOSTS_LIMIT=300 UCX_TLS=tcp,self "$here/two_hosts.sh" --expect-ipc \
  --across "$across" mpirun "$library" "$build/mpi_tests/p2p_stress" --messages 3000
step two_hosts_matrix env TWO_HOSTS_LIMIT=300 UCX_TLS=tcp,self "$here/two_hosts.sh" \
  --across "$across" mpirun "$library" "$build/mpi_tests/p2p_matrix" --sizes 0,256,8192,100000,3000001,67108864
step host_only_no_driver launch 2 120 "$build/mpi_tests/p2p_semantics" --memory host
step lifecycle_reset_before_finalize launch 2 60 "$build/mpi_tests/device_lifecycle"
step lifecycle_late_context launch 2 60 "$build/mpi_tests/device_lifecycle" --late-context
step demo launch 2 60 "$build/mpi_tests/cumpi_demo"
step mpi4py_cupy_np2 launch 2 120 python3 "$here/mpi4py_cupy.py"
step mpi4py_cupy_np4 launch 4 120 python3 "$here/mpi4py_cupy.py"
if has_mps; then
  step p2p_matrix_np4_mps with_mps launch 4 300 "$build/mpi_tests/p2p_matrix" --sizes 0,255,256,8192,1048576,67108864
fi
fi
# Production readiness on real device memory: over 2 GiB, truncation, freed
# buffers, ranks that die (each must end without a hang), observability,
# Fortran's three bindings, cumpi-info.
if [ "$parts" = all ] || [ "$parts" = production ]; then
  step large_messages launch 2 400 "$build/mpi_tests/large_messages"
  step large_messages_host_plain_mpi "$here/run_launched.sh" mpirun 2 300 "" "$build/mpi_tests/large_messages" \
    --memory host
  step truncation launch 2 300 "$build/mpi_tests/truncation" --unwatched-host-receives-below 256
  step truncation_short_envelopes short_envelopes launch 2 300 "$build/mpi_tests/truncation" \
    --unwatched-host-receives-below 8
  step freed_device_pointer launch 2 120 "$build/mpi_tests/freed_device_pointer"
  for how in kill abort mpi_abort; do
    for where in send recv collective; do
      step "peer_dies_${how}_$where" "$here/ends_without_hang.sh" 120 "$here/run_launched.sh" mpirun 2 120 \
        "$library" "$build/mpi_tests/peer_killed" --how "$how" --where "$where"
      step "peer_dies_${how}_${where}_ended" grep -q "ended without a hang" "$out/peer_dies_${how}_$where.log"
    done
  done
  step observability "$here/observability.sh" mpirun "$library" "$build/mpi_tests/p2p_matrix" \
    "$build/mpi_tests/collectives"
  for binding in mpif_h use_mpi use_mpi_f08; do
    if [ -x "$build/mpi_tests/fortran_device_$binding" ]; then
      step "fortran_$binding" launch 2 120 "$build/mpi_tests/fortran_device_$binding"
    fi
  done
  step cumpi_info "$build/tools/cumpi-info"
  echo "--- cumpi-info"
  cat "$out/cumpi_info.log"
fi
# The randomized stress to 10^5 messages, 4 and 8 ranks on the one GPU
# under MPS (STRESS_RANKS picks, for a short device budget).
if [ "$parts" = stress ]; then
  for ranks in ${STRESS_RANKS:-4 8}; do
    step "p2p_stress_np${ranks}_1e5" $mps launch "$ranks" "${STRESS_LIMIT:-540}" "$build/mpi_tests/p2p_stress" \
      --messages "${STRESS_MESSAGES:-100000}"
    grep -m1 "seed" "$out/p2p_stress_np${ranks}_1e5.log"
  done
fi
# GPU collectives against the MPI library's own on host buffers: 2, 3, 4
# and 8 ranks on the GPUs there are, under MPS where it exists.
if [ "$parts" = all ] || [ "$parts" = tests ] || [ "$parts" = coll ]; then
  step device_collectives_np2 $mps launch 2 300 "$build/mpi_tests/device_collectives" --large
  step device_collectives_np3 $mps launch 3 300 "$build/mpi_tests/device_collectives" --cycles 300
  step device_collectives_np4 $mps launch 4 400 "$build/mpi_tests/device_collectives" --large
  step device_collectives_np8 $mps launch 8 400 "$build/mpi_tests/device_collectives" --cycles 100
  step device_collectives_np4_staged $mps coll_staged launch 4 300 "$build/mpi_tests/device_collectives" \
    --cycles 100
  step device_collectives_np4_no_mps launch 4 300 "$build/mpi_tests/device_collectives" --cycles 100
  step collectives_np4_coll $mps launch 4 150 "$build/mpi_tests/collectives"
  # Two test hosts (network namespaces, or hostnames over loopback; skipped
  # without root), 2 ranks on each: Allreduce, Reduce and Bcast in steps, and
  # with ranks in blocks Allgather too.
  step two_hosts_hierarchy $mps env CUMPI_COLL_HIERARCHY=1 TWO_HOSTS_LIMIT=300 "$here/two_hosts.sh" --across none \
    --expect "takes the hierarchy" mpirun "$library" "$build/mpi_tests/device_collectives" --cycles 100
  allgather_in_steps="MPI_Allgather on a communicator of 4 ranks on 2 nodes takes the hierarchy"
  step two_hosts_hierarchy_blocks $mps env CUMPI_COLL_HIERARCHY=1 TWO_HOSTS_MAP_BY=slot TWO_HOSTS_LIMIT=300 \
    "$here/two_hosts.sh" --across none --expect "$allgather_in_steps" \
    mpirun "$library" "$build/mpi_tests/device_collectives" --cycles 100
fi
# Nonblocking collectives on device buffers: the GPU algorithms from the start
# (a wait long enough for every rank's offer), the default wait, and staged.
if [ "$parts" = all ] || [ "$parts" = tests ] || [ "$parts" = coll ] || [ "$parts" = nbcoll ]; then
  agreed() { CUMPI_COLL_START_WAIT=10000 "$@"; }
  step nonblocking_collectives_np2 $mps agreed launch 2 300 "$build/mpi_tests/nonblocking_device_collectives"
  step nonblocking_collectives_np4 $mps agreed launch 4 400 "$build/mpi_tests/nonblocking_device_collectives" --large
  step nonblocking_collectives_np8 $mps agreed launch 8 400 "$build/mpi_tests/nonblocking_device_collectives"
  step nonblocking_collectives_np4_default_wait $mps launch 4 300 "$build/mpi_tests/nonblocking_device_collectives"
  step nonblocking_collectives_np4_staged $mps coll_staged launch 4 300 \
    "$build/mpi_tests/nonblocking_device_collectives"
fi
if [ "$parts" = nbcoll ]; then
  for ranks in 4 2 8; do
    step "coll_bench_nonblocking_np$ranks" $mps launch "$ranks" 400 "$build/mpi_tests/coll_bench" \
      --collectives iallreduce,allreduce,ibcast,bcast --factor 8 --max "${COLL_BENCH_MAX:-134217728}" \
      --csv "$out/coll_bench_nonblocking_np$ranks.csv"
    echo "--- nonblocking collectives, $ranks ranks"
    grep -v '^measured' "$out/coll_bench_nonblocking_np$ranks.log"
  done
fi
# The GPU collectives' speed beside the staged path and host buffers.
if [ "$parts" = all ] || [ "$parts" = collbench ]; then
  for ranks in 4 2 8; do
    step "coll_bench_np$ranks" $mps launch "$ranks" 400 "$build/mpi_tests/coll_bench" \
      --max "${COLL_BENCH_MAX:-268435456}" --csv "$out/coll_bench_np$ranks.csv"
    echo "--- collectives, $ranks ranks"
    grep -v '^measured' "$out/coll_bench_np$ranks.log"
  done
fi
# Ranks on distinct GPUs (rank -> GPU by local rank): peer IPC over NVLink,
# then each rank seeing its own GPU only, where IPC must decline.
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
if [ "$parts" = multigpu ] || { [ "$parts" = all ] && [ "${gpus:-0}" -ge 2 ]; }; then
  export NCCL_NVLS_ENABLE=0
  matrix_sizes=0,8,255,256,8192,65536,1048576,16777216,67108864
  step multi_gpu_matrix_np2 env CUMPI_LOG=info \
    "$here/run_launched.sh" mpirun 2 500 "$library" "$build/mpi_tests/p2p_matrix" --sizes $matrix_sizes
  step multi_gpu_takes_ipc grep -q "take cuda_ipc" "$out/multi_gpu_matrix_np2.log"
  step multi_gpu_matrix_np4 launch 4 500 "$build/mpi_tests/p2p_matrix" --sizes $matrix_sizes
  step multi_gpu_stress_np4 launch 4 300 "$build/mpi_tests/p2p_stress" --messages 10000
  step own_gpu_only_matrix_np2 env CUMPI_LOG=info \
    "$here/run_launched.sh" mpirun 2 500 "$library" "$here/own_gpu_only.sh" "$build/mpi_tests/p2p_matrix" \
    --sizes $matrix_sizes
  step own_gpu_only_declines grep -q "take staged, pulled: the sender's GPU is not visible" \
    "$out/own_gpu_only_matrix_np2.log"
  step own_gpu_only_stress_np4 launch 4 300 "$here/own_gpu_only.sh" "$build/mpi_tests/p2p_stress" --messages 10000
  step own_gpu_only_semantics_np2 launch 2 120 "$here/own_gpu_only.sh" "$build/mpi_tests/p2p_semantics"
  step own_gpu_only_collectives_np2 launch 2 150 "$here/own_gpu_only.sh" "$build/mpi_tests/collectives"
  step multi_gpu_benchmark env CUMPI_LOG=info "$here/run_launched.sh" mpirun 2 200 "$library" \
    "$build/mpi_tests/cumpi_bench" --pairs dd --allreduce 0 --csv "$out/bench_multi_gpu.csv"
  echo "--- benchmark, one GPU per rank"
  cat "$out/multi_gpu_benchmark.log"
fi
# Host buffers with cumpi beside plain MPI: a process that never loads CUDA,
# and a CUDA process with a device receive in flight. First in one process
# (PMPI_* beside MPI_*, with the unloaded process as the method's spread),
# then in alternating processes.
if [ "$parts" = all ] || [ "$parts" = hostpath ]; then
  step host_path_in_process python3 "$here/bench/host_path_compare.py" "$build" --rounds "${HOST_PATH_ROUNDS:-3}" \
    --pairs "${HOST_PATH_PAIRS:-3}" --variants unloaded,no-cuda,cuda --csv "$out/host_path_in_process.csv" \
    -- ${HOST_PATH_ARGS:-}
  echo "--- host path, in one process"
  cat "$out/host_path_in_process.log"
  if [ "${HOST_PATH_PROCESSES:-1}" != 0 ]; then
    step host_path python3 "$here/bench/host_path_compare.py" "$build" --rounds "${HOST_PATH_ROUNDS:-3}" \
      --csv "$out/host_path.csv" -- ${HOST_PATH_ARGS:-}
    echo "--- host path, alternating processes"
    cat "$out/host_path.log"
  fi
fi
if [ "$parts" != tests ] && [ "$parts" != multigpu ] && [ "$parts" != hostpath ] && [ "$parts" != coll ] &&
  [ "$parts" != collbench ] && [ "$parts" != nbcoll ] && [ "$parts" != production ] && [ "$parts" != stress ]; then
step benchmark env CUMPI_LOG=info CUMPI_STATS=1 "$here/run_launched.sh" mpirun 2 200 "$library" "$build/mpi_tests/cumpi_bench" --pairs dd,hh,dh,hd --allreduce 0 --csv "$out/bench.csv"
step benchmark_staged staged launch 2 300 "$build/mpi_tests/cumpi_bench" --pairs hh,dd --allreduce 0 --min 1048576 --csv "$out/bench_staged.csv"
if has_mps; then
  step benchmark_mps with_mps env CUMPI_LOG=info CUMPI_STATS=1 "$here/run_launched.sh" mpirun 2 200 "$library" \
    "$build/mpi_tests/cumpi_bench" --pairs dd,hh,dh,hd --allreduce 0 --csv "$out/bench_mps.csv"
fi
if has_mps; then
  step benchmark_mps_short_envelopes with_mps env CUMPI_SHORT_ENVELOPES=1 CUMPI_STATS=1 "$here/run_launched.sh" \
    mpirun 2 200 "$library" "$build/mpi_tests/cumpi_bench" --pairs dd,dh,hd,hh --max 65536 --allreduce 0 \
    --csv "$out/bench_mps_short_envelopes.csv"
fi
step benchmark_short_envelopes env CUMPI_SHORT_ENVELOPES=1 "$here/run_launched.sh" mpirun 2 200 "$library" \
  "$build/mpi_tests/cumpi_bench" --pairs dd --max 65536 --allreduce 0 --csv "$out/bench_short_envelopes.csv"
step host_overhead "$here/bench/host_overhead.sh" "$build" 15
step host_overhead_short_envelopes "$here/bench/host_overhead.sh" "$build" 9 CUMPI_SHORT_ENVELOPES=1
if [ -x "$build/mpi_tests/small_copy_floors" ]; then
  step small_copy_floors "$build/mpi_tests/small_copy_floors" --bytes 8
fi
fi
if [ "$parts" != tests ] && [ "$parts" != multigpu ] && [ "$parts" != hostpath ] && [ "$parts" != coll ] &&
  [ "$parts" != collbench ] && [ "$parts" != nbcoll ] && [ "$parts" != production ] && [ "$parts" != stress ]; then
  echo "--- benchmark"
  cat "$out/benchmark.log" 2> /dev/null
  if [ -f "$out/benchmark_mps.log" ]; then
    echo "--- benchmark under MPS"
    cat "$out/benchmark_mps.log"
  fi
  for name in benchmark_mps_short_envelopes benchmark_short_envelopes host_overhead_short_envelopes; do
    if [ -f "$out/$name.log" ]; then
      echo "--- $name"
      cat "$out/$name.log"
    fi
  done
  echo "--- benchmark, CUMPI_TRANSPORTS=staged"
  cat "$out/benchmark_staged.log" 2> /dev/null
  echo "--- host overhead"
  cat "$out/host_overhead.log" 2> /dev/null
  echo "--- one small copy, by mechanism"
  cat "$out/small_copy_floors.log" 2> /dev/null
fi
echo "gpu suite: $failures failing steps"
exit $((failures > 0))
