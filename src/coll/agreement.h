// Which communicators have an agreement board (coll/agreement_board.h) and
// the announcements of calls on host buffers. A board is made, collectively,
// at the first blocking collective the seam takes on an intra-communicator
// of two or more ranks on one node, when CUMPI_COLL lists an algorithm that
// needs every rank's buffers on a device; every rank makes that call in the
// same order, whatever its buffers, so every rank makes the board there.
#pragma once

#include <atomic>

#include "coll/agreement_board.h"
#include "protocol/comm_context.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::coll {

// Whether calls on host buffers must announce themselves: set at MPI_Init
// from CUMPI_COLL. While false, host collectives pass straight to MPI.
inline std::atomic<bool> g_host_calls_announce{false};
inline bool host_calls_announce() { return g_host_calls_announce.load(std::memory_order_relaxed); }
void set_host_calls_announce(bool on);

// The board of `comm` (whose context is `context`), made on the first call;
// null where the communicator has none (another shape, or shared memory
// could not be had: every rank then knows). Collective on the first call.
AgreementBoard* agreement_board(protocol::CommContext& context, MPI_Comm comm, Status* status);
// For nonblocking calls, whose start must not wait for other ranks: the
// board made by an earlier blocking call, else null. Every rank made the
// same calls before, so every rank finds the same.
AgreementBoard* existing_board(protocol::CommContext& context);

// How a rank waits on the board: spins a little, then progresses the
// engine and the MPI library (a peer may wait in a nonblocking collective
// this rank started on the staged path), lets waiting threads have the
// engine, and yields the CPU (ranks may outnumber cores).
AgreementBoard::WaitHook polite_wait();

// A collective of the seam on host buffers: announces "nothing offered"
// where host calls announce themselves and the communicator has a board (a
// blocking call makes it on first use, a nonblocking one only uses an
// existing one). Errors are left to the MPI library's own call that follows.
void announce_on_board(MPI_Comm comm, bool blocking);
inline void announce_host_call(MPI_Comm comm, bool blocking) {
  if (host_calls_announce()) {
    announce_on_board(comm, blocking);
  }
}

}  // namespace cumpi::coll
