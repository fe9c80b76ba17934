// NCCL as the nccl algorithm uses it (coll/nccl_algorithm.h): libnccl.so.2
// opened with dlopen on first use (never linked: the library loads where
// NCCL is absent), its calls wrapped in cumpi's types, and every failure a
// Status naming the call with NCCL's own error string. Built against nccl.h
// only where CMake found it (CUMPI_WITH_NCCL); without it every call says
// so, and the algorithm declines.
#pragma once

#include <cstddef>
#include <string>

#include "memory/reduction.h"
#include "runtime/status.h"

namespace cumpi::coll::nccl {

// An NCCL communicator (ncclComm_t).
struct Communicator;

// NCCL_UNIQUE_ID_BYTES: what rank 0 makes and every rank passes to init().
inline constexpr std::size_t kUniqueIdBytes = 128;
struct UniqueId {
  unsigned char bytes[kUniqueIdBytes];
};

// Whether NCCL can be used (libnccl.so.2 loads and has every function);
// loads it on the first call. *why_not says why not.
bool available(std::string* why_not);
// "2.28.3", once available.
std::string version();

// The element types and ops NCCL reduces (the rest stays with ipc or staged).
bool reduces(memory::ReductionType type, memory::ReductionOp op);

Status unique_id(UniqueId* id);
// Collective over the `size` ranks that pass the same id; the CUDA context
// of the ranks' buffers must be current.
Status init(const UniqueId& id, int size, int rank, Communicator** out);
void destroy(Communicator* comm);

// Enqueued on `stream` (a CUstream); done when the stream passes them.
Status all_reduce(const void* send, void* receive, std::size_t count, memory::ReductionType type,
                  memory::ReductionOp op, Communicator* comm, void* stream);
Status reduce(const void* send, void* receive, std::size_t count, memory::ReductionType type, memory::ReductionOp op,
              int root, Communicator* comm, void* stream);
Status broadcast(const void* send, void* receive, std::size_t bytes, int root, Communicator* comm, void* stream);
Status all_gather(const void* send, void* receive, std::size_t bytes_each, Communicator* comm, void* stream);
Status reduce_scatter(const void* send, void* receive, std::size_t count_each, memory::ReductionType type,
                      memory::ReductionOp op, Communicator* comm, void* stream);
// Block r of `send` to rank r, rank r's block into block r of `receive`.
Status all_to_all(const void* send, void* receive, std::size_t bytes_each, int size, Communicator* comm, void* stream);

}  // namespace cumpi::coll::nccl
