#!/usr/bin/env bash
# install_consumer.sh BUILD_DIR SOURCE_DIR MPICC MPIEXEC: installs cumpi into a temporary
# prefix, checks what was installed and what the library exports, then builds
# and runs a consumer with find_package(cumpi).
set -euo pipefail
build=$1 source=$2 mpicc=$3 mpiexec=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
for file in lib/libcumpi.so include/cumpi/cumpi.h include/mpi-ext.h lib/cmake/cumpi/cumpiConfig.cmake bin/cumpi-info \
  bin/cumpi-plot; do
  [ -e "$work/prefix/$file" ] || { echo "not installed: $file"; exit 1; }
done
# The installed cumpi-info finds the libcumpi it came with.
# (Its whole output is taken first: grep -q leaving the pipe early would kill
# it with SIGPIPE, which pipefail reports as a failure.)
info=$("$work/prefix/bin/cumpi-info") || { echo "the installed cumpi-info does not run"; exit 1; }
grep -q "^cumpi [0-9]" <<< "$info" || { echo "the installed cumpi-info does not say its version:"; echo "$info"; exit 1; }
[ ! -e "$work/prefix/lib/libcumpi_emu.so" ] || { echo "the test-only emulation library was installed"; exit 1; }
exported=$(nm -D --defined-only "$work/prefix/lib/libcumpi.so" | awk '{ print $3 }' | grep -v -E '^(MPI_|PMPI_|MPIX_|cumpi_)' || true)
[ -z "$exported" ] || { echo "symbols exported beyond MPI_*, PMPI_*, MPIX_*, cumpi_*:"; echo "$exported"; exit 1; }
nm -D --defined-only "$work/prefix/lib/libcumpi.so" | grep -q ' cumpi_emu_' && { echo "emulation API in the production library"; exit 1; }
cmake -S "$source/tests/install_consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DMPI_C_COMPILER="$mpicc" \
  -DCMAKE_C_FLAGS="-I$work/prefix/include" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$source/mpi_tests/run_launched.sh" "$mpiexec" 1 60 "" "$work/consumer/consumer"
echo "1 passed, 0 failed"
