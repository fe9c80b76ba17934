// The wrapper edge: a Status becomes an MPI error code, delivered through the
// communicator's error handler as the MPI library would deliver its own.
#pragma once

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi {

// A return code of the real MPI as a Status: ok, or an error its handler has
// already seen.
inline Status from_mpi(int rc) { return rc == MPI_SUCCESS ? Status::ok() : Status::mpi(rc); }

// The MPI error class that stands for a cumpi status code.
int mpi_error_class(StatusCode code);

// The code a completed request reports for `status`, whose message is logged
// (no error handler runs here: the completing call reports it): MPI_SUCCESS,
// the MPI library's own code, or the class of a cumpi error.
int request_error_code(const Status& status);

// MPI_SUCCESS for ok; the MPI library's code for mpi_error (its handler has
// already run); otherwise logs the message, prefixed with the MPI call
// (`intercept_Send` or `MPI_Send` both give "MPI_Send"), invokes comm's
// error handler and returns the code: the MPI library's for
// mpi_error_returned, else the class of cumpi's error.
int report(const Status& status, MPI_Comm comm, const char* mpi_call);

}  // namespace cumpi
