// The progress engine: advances outstanding device operations. Every
// intercepted call runs it when there is something outstanding.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "protocol/operation_table.h"
#include "runtime/engine_lock.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// Tests the inner requests of pending operations, finishes the completed
// ones (copy-back, generalized request completion) and the orphaned
// persistent ones. Never blocks; returns at once if another thread is at it.
void progress();

// progress() as an MPI call runs it on entry: copies it starts stay queued,
// so that the pulls a window of Irecv or Isend calls finds gather into one
// batch, submitted by the next completion call (Wait, Test...) or blocking
// loop.
void progress_on_entry();

inline void progress_if_pending() {
  if (has_pending_operations()) {
    progress();
  }
}

// progress_if_pending() one call in kSweepEvery: for loops and calls that
// wait for host requests while device operations are pending. A sweep tests
// every pending operation (an MPI call each), which host traffic must not
// pay on every call; a peer waiting for this rank's service still gets it
// within a few microseconds.
constexpr unsigned kSweepEvery = 8;
void progress_now_and_then();

// Whether an engine call may block in the real MPI's own blocking call
// (Recv, Sendrecv, Wait...) rather than in a loop of tests: not while a peer
// may wait for this rank's engine, and never while other threads may use
// the engine. A call posted and waited for in one real call cannot give the
// engine up between the post and the wait, and the post must come under the
// engine's lock: another thread's probe must not take a message into the
// matched queue between this call's look at the queue and its post.
inline bool may_block_in_mpi() { return !needs_service() && !runtime::engine_serves_threads_now(); }

// Waits for a host request while device operations are pending: tests it,
// and progresses the engine now and then.
Status wait_serving(MPI_Request* request, MPI_Status* status);

// Takes over `operation`, whose inner request is posted, and gives the user
// its generalized request; errors of the operation go to comm's handler.
Status track(std::unique_ptr<Operation> operation, MPI_Request* user_request, MPI_Comm comm);
// A request for a nonblocking collective that ran to its end in its start:
// complete, with the empty status MPI gives a collective's request.
Status track_completed(MPI_Request* user_request, MPI_Comm comm);

// The outcome behind one of cumpi's generalized requests, while MPI has
// not freed it; null for any other request.
std::shared_ptr<Outcome> outcome_of(MPI_Request request);
// The same for `count` requests at once; *outcomes stays empty when none is
// cumpi's, and otherwise holds one entry per request (null for others).
void outcomes_of(int count, const MPI_Request requests[], std::vector<std::shared_ptr<Outcome>>* outcomes);
// Whether any of cumpi's generalized requests exists (until MPI frees it).
inline std::atomic<std::size_t> g_generalized_requests{0};
inline bool has_generalized_requests() { return g_generalized_requests.load(std::memory_order_relaxed) != 0; }

// At MPI_Finalize: progresses until nothing is pending (a correct program
// has completed everything; this only finishes copy-backs in flight).
void drain_before_finalize();

}  // namespace cumpi::protocol
