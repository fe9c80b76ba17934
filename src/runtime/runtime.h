// cumpi's life in a process: started after the real MPI_Init, stopped before
// the real MPI_Finalize. Nothing heavy happens before that (libcumpi is also
// preloaded into mpirun and the shells it starts).
#pragma once

#include <atomic>

namespace cumpi::runtime {

// What an intercepted call must do, in one word read once per call: host-
// buffer calls in the common state (kActive alone) do nothing else.
enum EntryState : unsigned {
  kActive = 1,          // between cumpi's start and stop, unless CUMPI_DISABLE=1
  kStatisticsWork = 2,  // CUMPI_STATS=1: count and time the call
  kProgressWork = 4,    // device operations are outstanding: advance them
  kQueuedMessages = 8,  // probes took messages out of MPI: receives must look at them first
};
inline std::atomic<unsigned> g_entry_state{0};

inline unsigned entry_state() { return g_entry_state.load(std::memory_order_relaxed); }
inline bool interposing() { return (entry_state() & kActive) != 0; }
inline void set_entry_state(EntryState bit, bool on) {
  if (on) {
    g_entry_state.fetch_or(bit, std::memory_order_release);
  } else {
    g_entry_state.fetch_and(~static_cast<unsigned>(bit), std::memory_order_release);
  }
}

// After the real MPI_Init/MPI_Init_thread succeeded: logging, configuration
// and statistics of this rank. The engine above starts after it
// (mpi_wrappers/engine_lifecycle.h).
void start();
// MPI_COMM_WORLD's rank of this process; -1 before start().
int world_rank();

}  // namespace cumpi::runtime
