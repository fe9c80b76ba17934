// The tests named in wrapped_functions.def's passes_straight column: true when a
// call certainly needs nothing from cumpi, decided in a few instructions with
// no call (but for a host collective's announcement, announced()). A false
// answer only means "let intercept_* look closer".
#pragma once

#include "coll/agreement.h"
#include "coll/hierarchy.h"
#include "memory/classifier.h"
#include "protocol/envelope.h"
#include "protocol/completion.h"
#include "protocol/operation_table.h"
#include "protocol/type_size_cache.h"

namespace cumpi::pass_through {

// Host memory by construction (NULL, the first page, heap, stack, image).
using memory::known_host;

// Collectives of the seam on host buffers announce themselves
// (coll/agreement.h) while an algorithm that needs agreement is configured:
// done here, where the call then goes straight to the MPI library, as the
// seam's host path would (the way there repeated the entry's tests). True.
inline bool announced(MPI_Comm comm, bool blocking) {
  coll::announce_host_call(comm, blocking);
  return true;
}

// MPI_Allreduce, MPI_Reduce, MPI_Bcast and MPI_Allgather on host buffers
// may go in steps across nodes (coll/hierarchy.h).
using coll::hierarchy_on;

// No device request exists: start needs nothing of cumpi.
inline bool no_device_requests() { return !protocol::has_device_requests(); }
// Neither device requests nor watched host receives exist: wait, test and
// free need nothing of cumpi.
inline bool no_requests_to_finish() { return !protocol::completion_needs_engine(); }

// A host receive that certainly cannot take an envelope: its capacity is
// smaller, by the thread's cached size of the datatype (a miss means "look
// closer"). The entry point takes this path only in the plain active state,
// which already says that no device operation needs service and no message
// waits in the matched queue (runtime::kProgressWork, kQueuedMessages).
inline bool small_host_receive(int count, MPI_Datatype type) {
  long long size = 0;
  return protocol::cached_type_size(type, &size) &&
         static_cast<long long>(count) * size < static_cast<long long>(protocol::smallest_watched_receive());
}

}  // namespace cumpi::pass_through
