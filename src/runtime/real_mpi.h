// The one table through which cumpi reaches the real MPI library. The engine
// calls only this table, never the MPI_*/PMPI_* symbols, which may be cumpi's
// own entry points.
#pragma once

#include <atomic>

#include "runtime/mpi_api.h"

namespace cumpi {

struct RealMpi {
#define CUMPI_REAL(name) decltype(&::PMPI_##name) name = nullptr;
#include "runtime/real_functions.def"
};

namespace detail {
extern std::atomic<bool> g_real_mpi_loaded;
extern RealMpi g_real_mpi;
void load_real_mpi();
}  // namespace detail

// Resolved lazily at the first call, not in a constructor: programs such as
// mpi4py load libmpi themselves, after libcumpi was preloaded.
inline const RealMpi& real_mpi() {
  if (!detail::g_real_mpi_loaded.load(std::memory_order_acquire)) {
    detail::load_real_mpi();
  }
  return detail::g_real_mpi;
}

}  // namespace cumpi
