// The size of the datatype a thread received with last, so that a host
// receive can be told too small for an envelope in a few instructions
// (mpi_wrappers/pass_through.h). MPI_Type_free invalidates every thread's
// entry: a freed handle may come back as another type.
#pragma once

#include <atomic>

#include "runtime/mpi_api.h"

namespace cumpi::protocol {

struct TypeSizeCache {
  MPI_Datatype type;
  long long size;
  unsigned generation;
  bool valid;
  bool packed;  // elements lie back to back from the buffer's first byte, no holes
};

extern thread_local TypeSizeCache t_type_size __attribute__((tls_model("initial-exec")));
inline std::atomic<unsigned> g_type_generation{0};

inline bool cached_type_size(MPI_Datatype type, long long* size) {
  const TypeSizeCache& entry = t_type_size;
  if (!entry.valid || entry.type != type || entry.generation != g_type_generation.load(std::memory_order_relaxed)) {
    return false;
  }
  *size = entry.size;
  return true;
}

// Whether `type`'s data lies packed, when it is the cached type.
inline bool cached_type_packed(MPI_Datatype type, bool* packed) {
  long long size = 0;
  if (!cached_type_size(type, &size)) {
    return false;
  }
  *packed = t_type_size.packed;
  return true;
}

inline void remember_type_size(MPI_Datatype type, long long size, bool packed) {
  t_type_size = TypeSizeCache{type, size, g_type_generation.load(std::memory_order_relaxed), true, packed};
}

inline void forget_type_sizes() { g_type_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace cumpi::protocol
