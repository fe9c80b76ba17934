// The host bytes an intercepted call names, for CUMPI_STATS's pass-through
// row: count x size of the datatype for each (buffer, count, datatype) of
// the call whose buffer is host memory. Calls of other shapes (waits,
// probes, the v and w collectives, one-sided) name none. Asked only while
// statistics are on.
#pragma once

#include <cstddef>

#include "memory/classifier.h"
#include "runtime/mpi_api.h"
#include "runtime/real_mpi.h"

namespace cumpi::wrappers::call_bytes {

// One tag type per intercepted function, so that the shapes below are
// chosen by name (MPICH's handles are ints: types alone cannot tell).
#define CUMPI_INTERCEPT(name, params, args, passes_straight) \
  struct name {};
#include "mpi_wrappers/wrapped_functions.def"
#undef CUMPI_INTERCEPT

inline std::size_t host_bytes(const void* buffer, int count, MPI_Datatype type) {
  MPI_Count size = 0;
  if (count <= 0 || real_mpi().Type_size_x(type, &size) != MPI_SUCCESS ||
      memory::is_device(memory::locate(buffer, count, type))) {
    return 0;
  }
  return static_cast<std::size_t>(count) * static_cast<std::size_t>(size);
}

// Any call of no shape below (the ellipsis loses to every shape that fits).
template <typename Name>
std::size_t of(Name, ...) {
  return 0;
}

// (buf, count, type, ...): sends, receives, persistent requests, Bcast.
#define CUMPI_ONE_BUFFER(name)                                                      \
  template <typename... Rest>                                                       \
  std::size_t of(name, const void* buffer, int count, MPI_Datatype type, Rest...) { \
    return host_bytes(buffer, count, type);                                         \
  }
CUMPI_ONE_BUFFER(Send)
CUMPI_ONE_BUFFER(Ssend)
CUMPI_ONE_BUFFER(Bsend)
CUMPI_ONE_BUFFER(Rsend)
CUMPI_ONE_BUFFER(Isend)
CUMPI_ONE_BUFFER(Issend)
CUMPI_ONE_BUFFER(Ibsend)
CUMPI_ONE_BUFFER(Irsend)
CUMPI_ONE_BUFFER(Recv)
CUMPI_ONE_BUFFER(Irecv)
CUMPI_ONE_BUFFER(Sendrecv_replace)
CUMPI_ONE_BUFFER(Send_init)
CUMPI_ONE_BUFFER(Ssend_init)
CUMPI_ONE_BUFFER(Bsend_init)
CUMPI_ONE_BUFFER(Rsend_init)
CUMPI_ONE_BUFFER(Recv_init)
CUMPI_ONE_BUFFER(Mrecv)
CUMPI_ONE_BUFFER(Imrecv)
CUMPI_ONE_BUFFER(Bcast)
CUMPI_ONE_BUFFER(Ibcast)
#undef CUMPI_ONE_BUFFER

// (sendbuf, recvbuf, count, type, ...): reductions; both buffers move.
#define CUMPI_REDUCTION(name)                                                                          \
  template <typename... Rest>                                                                          \
  std::size_t of(name, const void* send, const void* receive, int count, MPI_Datatype type, Rest...) { \
    return host_bytes(send, count, type) + host_bytes(receive, count, type);                           \
  }
CUMPI_REDUCTION(Allreduce)
CUMPI_REDUCTION(Reduce)
CUMPI_REDUCTION(Reduce_scatter_block)
CUMPI_REDUCTION(Scan)
CUMPI_REDUCTION(Exscan)
CUMPI_REDUCTION(Iallreduce)
CUMPI_REDUCTION(Ireduce)
#undef CUMPI_REDUCTION

// (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, ...).
#define CUMPI_EXCHANGE(name)                                                                           \
  template <typename... Rest>                                                                          \
  std::size_t of(name, const void* send, int send_count, MPI_Datatype send_type, const void* receive,  \
                 int receive_count, MPI_Datatype receive_type, Rest...) {                              \
    return host_bytes(send, send_count, send_type) + host_bytes(receive, receive_count, receive_type); \
  }
CUMPI_EXCHANGE(Allgather)
CUMPI_EXCHANGE(Alltoall)
CUMPI_EXCHANGE(Gather)
CUMPI_EXCHANGE(Scatter)
CUMPI_EXCHANGE(Iallgather)
CUMPI_EXCHANGE(Ialltoall)
#undef CUMPI_EXCHANGE

template <typename... Rest>
std::size_t of(Sendrecv, const void* send, int send_count, MPI_Datatype send_type, int, int, const void* receive,
               int receive_count, MPI_Datatype receive_type, Rest...) {
  return host_bytes(send, send_count, send_type) + host_bytes(receive, receive_count, receive_type);
}

}  // namespace cumpi::wrappers::call_bytes
