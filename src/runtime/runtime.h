// cumpi's life in a process: started after the real MPI_Init, stopped before
// the real MPI_Finalize. Nothing heavy happens before that (libcumpi is also
// preloaded into mpirun and the shells it starts).
#pragma once

#include <atomic>

namespace cumpi::runtime {

inline std::atomic<bool> g_interposing{false};

// True between cumpi's start and stop, unless CUMPI_DISABLE=1.
inline bool interposing() { return g_interposing.load(std::memory_order_relaxed); }

// Work every intercepted call must do besides its own: one load tells the
// entry points whether there is any, so host-buffer calls stay a few
// instructions longer than plain MPI's.
enum EntryWork : unsigned {
  kStatisticsWork = 1,  // CUMPI_STATS=1: count and time the call
  kProgressWork = 2,    // device operations are outstanding: advance them
};
inline std::atomic<unsigned> g_entry_work{0};

inline unsigned entry_work() { return g_entry_work.load(std::memory_order_relaxed); }
inline void set_entry_work(EntryWork work, bool on) {
  if (on) {
    g_entry_work.fetch_or(work, std::memory_order_relaxed);
  } else {
    g_entry_work.fetch_and(~static_cast<unsigned>(work), std::memory_order_relaxed);
  }
}

// After the real MPI_Init/MPI_Init_thread succeeded.
void start();
// Before the real MPI_Finalize: drains, prints statistics, frees pools.
void stop();

int world_rank();

}  // namespace cumpi::runtime
