// The wrapper edge: a Status becomes an MPI error code, delivered through the
// communicator's error handler as the MPI library would deliver its own.
#pragma once

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi {

// The MPI function being intercepted on this thread, for error messages.
extern thread_local const char* t_current_mpi_call __attribute__((tls_model("initial-exec")));

// The MPI error class that stands for a cumpi status code.
int mpi_error_class(StatusCode code);

// MPI_SUCCESS for ok; the MPI library's code for mpi_error (its handler has
// already run); otherwise logs the message, invokes comm's error handler and
// returns the class.
int report(const Status& status, MPI_Comm comm);

}  // namespace cumpi
