#!/usr/bin/env bash
# host_overhead.sh BUILD_DIR [ROUNDS [VAR=value...]]: host-buffer 8-byte
# ping-pong latency with libcumpi.so preloaded (and the VAR=value settings
# given) divided by the same without it. Rounds alternate
# (plain, preloaded, plain, ...) so that machine noise hits both alike, on
# the same two cores every time (placement alone changes this latency by 2x
# on a VM); medians and minimums are compared. The ranks create a CUDA
# context when a GPU is there, so the figure is the one CUDA programs see.
set -euo pipefail
build=$(cd "$1" && pwd)
rounds=${2:-7}
settings=()
for setting in "${@:3}"; do settings+=(-x "$setting"); done
bench=$build/mpi_tests/cumpi_bench
context=0
nvidia-smi -L > /dev/null 2>&1 && context=1
cores=${BENCH_CORES:-0,1}
args=(-np 2 --cpu-set "$cores" --bind-to core --mca btl self,vader)
if [ "$(id -u)" = 0 ]; then args+=(--allow-run-as-root); fi
run() {
  timeout 120 mpirun "${args[@]}" "$@" "$bench" --pairs hh --min 8 --max 8 --iterations 200000 \
    --allreduce 0 --cuda-context "$context" | awk '$1 == "p2p" { print $5 }'
}
plain=() preloaded=()
for ((i = 0; i < rounds; i++)); do
  plain+=("$(run)")
  preloaded+=("$(run -x LD_PRELOAD="$build/src/libcumpi.so" "${settings[@]}")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1; }
p=$(median "${plain[@]}") q=$(median "${preloaded[@]}")
pm=$(minimum "${plain[@]}") qm=$(minimum "${preloaded[@]}")
echo "host 8 B one-way latency over $rounds rounds on cores $cores${3:+ (cumpi with ${*:3})} (us): plain median $p min $pm; with cumpi median $q min $qm"
echo "plain:     ${plain[*]}"
echo "preloaded: ${preloaded[*]}"
awk -v p="$p" -v q="$q" -v pm="$pm" -v qm="$qm" \
  'BEGIN { printf "ratio with/without cumpi: %.4f (medians), %.4f (minimums)\n", q / p, qm / pm }'
