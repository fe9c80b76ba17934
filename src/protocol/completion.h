// Wait, test, start and free for requests when device requests exist. The
// wrappers call these only then; otherwise they go straight to MPI.
//
// Waits loop over progress and the MPI test of the same family, so that
// MPI's own semantics (which request, in which order, error in status) hold
// for any mix of host requests and cumpi's generalized requests; completed
// persistent device requests get their copy-back before the call returns.
#pragma once

#include "protocol/host_receives.h"
#include "protocol/operation_table.h"
#include "protocol/progress.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// Completion calls go through cumpi while device requests (pending, or
// complete but not yet waited for) or watched host receives exist;
// otherwise straight to MPI.
inline bool completion_needs_engine() {
  return has_device_requests() || has_direct_receives() || has_generalized_requests();
}

// MPI_Start(all) goes through cumpi only to start persistent operations of
// its own: with none (only device operations pending), the requests are all
// the MPI library's.
inline bool start_needs_engine() { return has_device_requests() && operations().persistent_count() != 0; }

Status wait(MPI_Request* request, MPI_Status* status);
Status waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
Status waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
Status waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
Status test(MPI_Request* request, int* flag, MPI_Status* status);
Status testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
Status testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
Status testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
Status request_get_status(MPI_Request request, int* flag, MPI_Status* status);
Status request_free(MPI_Request* request);
Status start(MPI_Request* request);
Status startall(int count, MPI_Request requests[]);

}  // namespace cumpi::protocol
