// The byte count a completed receive's status holds, read from the status
// itself: the public MPI_Get_elements_x costs about a hundred instructions,
// and every watched host receive asks.
#pragma once

#include <cstddef>

#include "runtime/mpi_api.h"

namespace cumpi {

inline std::size_t status_bytes(const MPI_Status& status) {
#if defined(OPEN_MPI)
  return status._ucount;
#elif defined(MPICH)
  // The count's low 32 bits, then its high bits above the cancelled flag.
  return static_cast<std::size_t>(static_cast<unsigned>(status.count_lo)) |
         (static_cast<std::size_t>(static_cast<unsigned>(status.count_hi_and_cancelled) >> 1) << 32);
#else
#error "status_bytes: unknown MPI library"
#endif
}

}  // namespace cumpi
