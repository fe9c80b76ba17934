#!/usr/bin/env bash
# run_demo.sh BUILD_DIR: the demo on 2 ranks under LD_PRELOAD. On a machine
# with a GPU it preloads libcumpi.so; without one, libcumpi_emu.so (the
# emulated device memory the tests use).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
library=$build/src/libcumpi.so
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "no GPU here: the demo uses emulated device memory (libcumpi_emu.so)"
  library=$build/src/libcumpi_emu.so
fi
args=(-np 2 --oversubscribe)
if [ "$(id -u)" = 0 ]; then args+=(--allow-run-as-root); fi
exec timeout 120 mpirun "${args[@]}" -x LD_PRELOAD="$library" "$build/mpi_tests/cumpi_demo"
