#!/usr/bin/env bash
# sanitizers.sh SANITIZER: builds cumpi with CUMPI_SANITIZE=SANITIZER
# (address, undefined, or both in one build: address,undefined; CI takes
# both, one build for time) and runs the unit tests and emulated launched
# tests under it, with the sanitizer's runtime preloaded first, as a user
# must (README, Tests). `thread` builds only what the threaded test needs
# and runs it (MPI_THREAD_MULTIPLE, every route). Any report fails the run.
# Suppressions: only for the MPI library itself (.ci/lsan.supp and
# .ci/tsan.supp say why).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=$1
build=build-${sanitizer/,/-}
case $sanitizer in
  address) runtime=$(gcc -print-file-name=libasan.so) ;;
  undefined) runtime=$(gcc -print-file-name=libubsan.so) ;;
  address,undefined) runtime=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so) ;;
  thread) runtime=$(gcc -print-file-name=libtsan.so) ;;
  *) echo "sanitizers.sh: address, undefined, address,undefined or thread, not '$sanitizer'"; exit 2 ;;
esac
programs=(p2p_matrix p2p_semantics truncation collectives freed_device_pointer)
targets=(cumpi_unit_tests cumpi_emu "${programs[@]}")
if [ "$sanitizer" = thread ]; then targets=(cumpi_emu thread_levels); fi
cmake -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCUMPI_SANITIZE="$sanitizer" -DCUMPI_WERROR=ON > /dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
# Whole stacks (Open MPI is built without frame pointers), and Open MPI's
# components kept loaded to the end, so that leak reports name them.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:exitcode=23:fast_unwind_on_malloc=0
export OMPI_MCA_mca_base_component_disable_dlclose=1
export LSAN_OPTIONS=suppressions=$PWD/.ci/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=23
export TSAN_OPTIONS="halt_on_error=0 exitcode=23 second_deadlock_stack=1 history_size=7 ignore_noninstrumented_modules=1 suppressions=$PWD/.ci/tsan.supp"
lib=$build/src/libcumpi_emu.so
run() { mpi_tests/run_launched.sh mpirun "$@"; }
# The ranks get the sanitizer's runtime before libcumpi; mpirun itself is
# not instrumented and gets nothing.
preload="$runtime:$PWD/$lib"
if [ "$sanitizer" = thread ]; then
  # Every route: rendezvous over (emulated) CUDA IPC, the staged pipeline,
  # short envelopes.
  run 2 600 "$preload" "$build/mpi_tests/thread_levels" --expect-multiple 1
  CUMPI_TRANSPORTS=staged run 2 600 "$preload" "$build/mpi_tests/thread_levels" --expect-multiple 1
  CUMPI_SHORT_ENVELOPES=1 run 2 600 "$preload" "$build/mpi_tests/thread_levels" --expect-multiple 1
  echo "sanitizer $sanitizer: no reports"
  exit 0
fi
"$build/tests/cumpi_unit_tests" --gtest_brief=1
run 2 600 "$preload" "$build/mpi_tests/p2p_matrix" --sizes 0,8,255,256,8192,300000
run 3 600 "$preload" "$build/mpi_tests/p2p_semantics"
run 2 600 "$preload" "$build/mpi_tests/truncation" --unwatched-host-receives-below 256
run 3 600 "$preload" "$build/mpi_tests/collectives" --memory device
run 2 300 "$preload" "$build/mpi_tests/freed_device_pointer"
echo "sanitizer $sanitizer: no reports"
