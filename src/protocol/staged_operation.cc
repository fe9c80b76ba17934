#include "protocol/operations.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

bool StagedOperation::advance() {
  int flag = 0;
  MPI_Status status{};
  const int rc = real_mpi().Test(&inner, &flag, &status);
  if (rc == MPI_SUCCESS && flag == 0) {
    return false;
  }
  finish(rc, status);
  inner = MPI_REQUEST_NULL;
  return true;
}

int StagedOperation::cancel() { return inner == MPI_REQUEST_NULL ? MPI_SUCCESS : real_mpi().Cancel(&inner); }

// Records the inner request's outcome and copies received bytes back.
void StagedOperation::finish(int test_result, const MPI_Status& inner_status) {
  const RealMpi& mpi = real_mpi();
  Outcome& result = *outcome;
  result.status = inner_status;
  result.error = test_result;
  result.reported = test_result != MPI_SUCCESS;
  int cancelled = 0;
  mpi.Test_cancelled(&inner_status, &cancelled);
  result.cancelled = cancelled != 0;
  MPI_Count received = 0;
  if (mpi.Get_elements_x(&inner_status, MPI_BYTE, &received) != MPI_SUCCESS || received == MPI_UNDEFINED) {
    received = 0;
  }
  result.received_bytes = received;
  const bool data_arrived = !result.cancelled && (test_result == MPI_SUCCESS || test_result == MPI_ERR_TRUNCATE);
  stats::ScopedRecord record(route, 0);
  for (memory::StagedBuffer& buffer : writes) {
    if (!data_arrived) {
      break;
    }
    Status copied =
        copy_back_received_only ? buffer.copy_back(static_cast<std::size_t>(received)) : buffer.copy_back_all();
    if (!copied.is_ok()) {
      result.error = request_error_code(copied);
      result.reported = false;
    }
  }
  reads.clear();
  writes.clear();
}

}  // namespace cumpi::protocol
