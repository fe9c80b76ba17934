// cumpi's life in a process: started after the real MPI_Init, stopped before
// the real MPI_Finalize. Nothing heavy happens before that (libcumpi is also
// preloaded into mpirun and the shells it starts).
#pragma once

#include <atomic>

namespace cumpi::runtime {

extern std::atomic<bool> g_interposing;

// True between cumpi's start and stop, unless CUMPI_DISABLE=1.
inline bool interposing() { return g_interposing.load(std::memory_order_relaxed); }

// After the real MPI_Init/MPI_Init_thread succeeded.
void start();
// Before the real MPI_Finalize: drains, prints statistics, frees pools.
void stop();

int world_rank();

}  // namespace cumpi::runtime
