#include "runtime/errors.h"

#include <string>

#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi {

int mpi_error_class(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return MPI_SUCCESS;
    case StatusCode::mpi_error: return MPI_ERR_OTHER;
    case StatusCode::mpi_error_returned: return MPI_ERR_OTHER;
    case StatusCode::bad_buffer: return MPI_ERR_BUFFER;
    case StatusCode::bad_communicator: return MPI_ERR_COMM;
    case StatusCode::bad_count: return MPI_ERR_COUNT;
    case StatusCode::cuda_error: return MPI_ERR_OTHER;
    case StatusCode::nccl_error: return MPI_ERR_OTHER;
    case StatusCode::ucx_error: return MPI_ERR_OTHER;
    case StatusCode::out_of_memory: return MPI_ERR_NO_MEM;
    case StatusCode::truncated: return MPI_ERR_TRUNCATE;
    case StatusCode::unreachable: return MPI_ERR_OTHER;
    case StatusCode::internal: return MPI_ERR_INTERN;
  }
  return MPI_ERR_INTERN;
}

namespace {

// A truncated message is the application's to handle (MPI_ERRORS_RETURN
// programs meet it on purpose, and plain MPI prints nothing): said at info.
// Everything else cumpi reports is a failure worth a line at error.
void log_failure(const Status& status, const char* call) {
  const bool expected_by_programs = status.code() == StatusCode::truncated;
  if (expected_by_programs) {
    CUMPI_LOG(info, "%s%s%s", call, *call != '\0' ? ": " : "", status.message().c_str());
  } else {
    CUMPI_LOG(error, "%s%s%s", call, *call != '\0' ? ": " : "", status.message().c_str());
  }
}

bool carries_mpi_code(const Status& status) {
  return status.code() == StatusCode::mpi_error || status.code() == StatusCode::mpi_error_returned;
}

}  // namespace

int request_error_code(const Status& status) {
  if (status.is_ok()) {
    return MPI_SUCCESS;
  }
  log_failure(status, "");
  return carries_mpi_code(status) ? status.mpi_code() : mpi_error_class(status.code());
}

int report(const Status& status, MPI_Comm comm, const char* mpi_call) {
  if (status.is_ok()) {
    return MPI_SUCCESS;
  }
  if (status.code() == StatusCode::mpi_error) {
    return status.mpi_code();
  }
  const int code = carries_mpi_code(status) ? status.mpi_code() : mpi_error_class(status.code());
  const std::string name(mpi_call);
  const std::string prefix = "intercept_";
  const std::string call = name.rfind(prefix, 0) == 0 ? "MPI_" + name.substr(prefix.size()) : name;
  log_failure(status, call.c_str());
  real_mpi().Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
  return code;
}

}  // namespace cumpi
