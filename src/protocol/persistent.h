// Persistent device requests (MPI_Send_init, MPI_Recv_init, ...).
#pragma once

#include <memory>

#include "protocol/operation_table.h"
#include "runtime/status.h"

namespace cumpi::protocol {

void add_persistent(std::unique_ptr<PersistentOperation> operation);

// The MPI request of a persistent buffered device send's message (see
// PersistentOperation::buffered).
int make_buffered_request(const PersistentOperation& operation, MPI_Request* request);

// Before the real MPI_Start/Startall of `count` requests: refreshes the
// host copy of a send (and of a receive whose span has holes); a buffered
// send's request is made anew, and requests[i] follows it. Nothing for
// other requests. operations[i]: cumpi's operation of request i, null for
// the MPI library's. One lock for all: a window of persistent requests
// starts together.
Status prepare_starts(int count, MPI_Request requests[], PersistentOperation* operations[]);
// After the real start, with prepare_starts' operations. MPI_Start may
// replace a handle (Open MPI does while a previous buffered send is still
// in the transport): the operation follows it.
void mark_started(int count, PersistentOperation* const operations[], const MPI_Request requests[]);

// After a wait or test reported `request` complete with `status`: copies a
// receive's bytes back to the device, or pulls an envelope's message.
// `released` when the MPI library freed the request in that call (Open MPI
// frees a persistent request whose completion failed): cumpi's operation
// goes with it.
Finished complete_persistent(MPI_Request request, MPI_Status* status, bool released);

// MPI_Request_free on a persistent device request: frees it now if
// inactive, else once it completes. False when `request` is not one.
bool free_persistent(MPI_Request* request, int* result);

// Under the table's lock: completes persistent requests freed while active.
void progress_orphaned_persistent(OperationTable& table);

// Finishes started persistent receives whose message has arrived (pulls an
// envelope's), keeping the result for the user's completion call: the
// message's sender must not wait for that call (plain MPI's blocking send
// completes once its data has gone). From calls that wait or test only,
// since a pull may wait for the sender's copies.
void progress_active_persistent_receives(OperationTable& table);

}  // namespace cumpi::protocol
