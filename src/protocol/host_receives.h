// Host receives that could take an envelope (DESIGN §3, "the receiver
// recognises envelopes"), at plain MPI's cost.
//
// A nonblocking host receive is posted straight into the user's memory and
// the user gets MPI's own request; cumpi keeps (request, buffer, type,
// communicator) in a table. When a completion call (Wait*, Test*) reports
// such a request complete, one look at the byte count tells whether it can
// be an envelope at all; only then is the buffer read, the message pulled
// and the status corrected. Nothing is copied for plain data.
//
// Memory shared by several pending receives is where this needs care: MPI
// may write a second message over an envelope before cumpi read it. The
// table also knows which pending receives land where; envelope_grants.h
// keeps direct receives from overlapping while envelopes may arrive (a
// receive that would overlap lands privately, through WatchedReceive), and
// before cumpi itself writes a host buffer (a pull, a private landing's
// copy) it looks at the pending direct receives that overlap it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "protocol/operations.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// Direct receives pending: completion calls must look at what completes.
inline std::atomic<std::size_t> g_direct_receives{0};
inline bool has_direct_receives() { return g_direct_receives.load(std::memory_order_relaxed) != 0; }

// Direct receives pending while envelopes may arrive: one may hold an
// envelope whose sender waits for FIN, as a plain MPI sender waits for its
// receive to progress in any call, so progress must look at them.
bool direct_receives_need_service();
// Progress: examines the pending direct receives MPI completed.
void progress_direct_receives();

// Posts a host receive straight into `buffer` and watches it, unless it
// must land privately (envelopes may arrive and the memory overlaps a
// pending receive): *posted false then, and nothing was posted.
Status post_direct_receive(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                           MPI_Request* request, bool* posted);

// Whether a host receive may be posted straight by post_direct_receive_now,
// outside the engine: no message waits in the matched queue (which it
// would have to take first), no envelope may arrive (no overlap to check),
// one thread at a time calls MPI (no other thread's probe can move a
// message between the check and the post), and this rank takes no short
// envelopes (every receive the engine sees here is an envelope's size).
bool direct_receive_needs_no_engine();
// Posts and watches it, in the state above; returns MPI's code (MPI ran the
// handler of its own errors).
int post_direct_receive_now(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            MPI_Request* request);

// After a completion call reported `request` complete with `*status`: when
// it is one of the table's, examines what arrived (pulls an envelope's
// message into the buffer and corrects *status) and forgets it.
Finished finish_direct_receive(MPI_Request request, MPI_Status* status);

// MPI_Request_get_status found `request` complete: the same examination,
// kept for the call that completes it.
Finished peek_direct_receive(MPI_Request request, MPI_Status* status);

// MPI_Request_free of one of the table's receives: cumpi keeps the request
// and completes it in progress (an envelope must still be answered). False
// when `request` is not one.
bool free_direct_receive(MPI_Request* request);
// Progress: completes receives the user freed.
void progress_freed_direct_receives();
bool has_freed_direct_receives();

// Registers the host bytes [first, last) of a receive landing privately
// (WatchedReceive), so that later receives see the overlap; returns its key.
std::uint64_t add_private_receive(std::uintptr_t first, std::uintptr_t last);
void remove_private_receive(std::uint64_t key);

// True when [first, last) overlaps a pending receive's host bytes.
bool overlaps_pending_receive(std::uintptr_t first, std::uintptr_t last);
// The same for the bytes of (buffer, count, type).
bool overlaps_pending_receive(const void* buffer, int count, MPI_Datatype type);
// True when [first, last) overlaps a pending direct receive's.
bool overlaps_direct_receive(std::uintptr_t first, std::uintptr_t last);

// Before cumpi writes host memory [first, last): each pending direct
// receive overlapping it that MPI already completed is examined now (its
// envelope, if any, read before the write can destroy it).
void settle_direct_receives(std::uintptr_t first, std::uintptr_t last);

// No two pending direct receives overlap (envelopes may be granted).
bool direct_receives_disjoint();

}  // namespace cumpi::protocol
