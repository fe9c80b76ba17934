#include "protocol/progress.h"

#include "protocol/persistent.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"

namespace cumpi::protocol {

namespace {

// Generalized-request callbacks. MPI calls them from inside PMPI_Wait/Test
// (query), PMPI_Request_free or the completing call (free) and PMPI_Cancel
// (cancel). Their extra state is a heap-held reference to the outcome.
using OutcomeRef = std::shared_ptr<Outcome>;

int query_operation(void* extra_state, MPI_Status* status) {
  const Outcome& outcome = **static_cast<OutcomeRef*>(extra_state);
  const RealMpi& mpi = real_mpi();
  status->MPI_SOURCE = outcome.status.MPI_SOURCE;
  status->MPI_TAG = outcome.status.MPI_TAG;
  status->MPI_ERROR = outcome.error;
  mpi.Status_set_elements_x(status, MPI_BYTE, outcome.received_bytes);
  mpi.Status_set_cancelled(status, outcome.cancelled ? 1 : 0);
  return outcome.error;
}

int free_operation(void* extra_state) {
  delete static_cast<OutcomeRef*>(extra_state);
  return MPI_SUCCESS;
}

int cancel_operation(void* extra_state, int complete) {
  if (complete != 0) {
    return MPI_SUCCESS;
  }
  const Outcome* outcome = static_cast<OutcomeRef*>(extra_state)->get();
  std::lock_guard<std::mutex> lock(operations().mutex());
  PendingOperation* operation = operations().find_pending(outcome);
  if (operation == nullptr || operation->inner == MPI_REQUEST_NULL) {
    return MPI_SUCCESS;
  }
  return real_mpi().Cancel(&operation->inner);
}

// Records the inner request's outcome and copies received bytes back.
void finish(PendingOperation& operation, int test_result, const MPI_Status& inner_status) {
  const RealMpi& mpi = real_mpi();
  Outcome& outcome = *operation.outcome;
  outcome.status = inner_status;
  outcome.error = test_result;
  int cancelled = 0;
  mpi.Test_cancelled(&inner_status, &cancelled);
  outcome.cancelled = cancelled != 0;
  MPI_Count received = 0;
  if (mpi.Get_elements_x(&inner_status, MPI_BYTE, &received) != MPI_SUCCESS || received == MPI_UNDEFINED) {
    received = 0;
  }
  outcome.received_bytes = received;
  const bool data_arrived = !outcome.cancelled && (test_result == MPI_SUCCESS || test_result == MPI_ERR_TRUNCATE);
  stats::ScopedRecord record(operation.route, 0);
  for (memory::StagedBuffer& buffer : operation.writes) {
    if (!data_arrived) {
      break;
    }
    Status copied = operation.copy_back_received_only ? buffer.copy_back(static_cast<std::size_t>(received))
                                                      : buffer.copy_back_all();
    if (!copied.is_ok()) {
      CUMPI_LOG(error, "%s", copied.message().c_str());
      outcome.error = mpi_error_class(copied.code());
    }
  }
  operation.reads.clear();
  operation.writes.clear();
}

void progress_pending(OperationTable& table) {
  const RealMpi& mpi = real_mpi();
  std::vector<PendingOperation*>& pending = table.pending();
  for (std::size_t i = 0; i < pending.size();) {
    PendingOperation& operation = *pending[i];
    int flag = 0;
    MPI_Status status{};
    const int rc = mpi.Test(&operation.inner, &flag, &status);
    if (rc == MPI_SUCCESS && flag == 0) {
      ++i;
      continue;
    }
    finish(operation, rc, status);
    operation.inner = MPI_REQUEST_NULL;
    const std::unique_ptr<PendingOperation> done = table.take_pending(i);
    mpi.Grequest_complete(done->user);
  }
}

}  // namespace

void progress() {
  OperationTable& table = operations();
  std::unique_lock<std::mutex> lock(table.mutex(), std::try_to_lock);
  if (!lock.owns_lock()) {
    return;
  }
  progress_pending(table);
  if (table.persistent_count() != 0) {
    progress_orphaned_persistent(table);
  }
}

Status track(std::unique_ptr<PendingOperation> operation, MPI_Request* user_request) {
  auto* reference = new OutcomeRef(operation->outcome);
  const int rc =
      real_mpi().Grequest_start(query_operation, free_operation, cancel_operation, reference, &operation->user);
  if (rc != MPI_SUCCESS) {
    delete reference;
    // The inner request is posted and cannot be taken back: finish it here.
    MPI_Status ignored;
    real_mpi().Wait(&operation->inner, &ignored);
    return Status::mpi(rc);
  }
  *user_request = operation->user;
  std::lock_guard<std::mutex> lock(operations().mutex());
  operations().add_pending(std::move(operation));
  return Status::ok();
}

void drain_before_finalize() {
  if (operations().pending_count() == 0) {
    return;
  }
  CUMPI_LOG(warn, "%zu device operations still pending at MPI_Finalize; completing them",
            operations().pending_count());
  // A correct program has nothing left but copy-backs in flight; one that
  // left a receive unmatched must not hang here.
  const double deadline = stats::now_seconds() + 10.0;
  while (operations().pending_count() != 0 && stats::now_seconds() < deadline) {
    progress();
  }
  if (operations().pending_count() != 0) {
    CUMPI_LOG(warn, "%zu device operations never completed; their buffers are left as they are",
              operations().pending_count());
  }
}

}  // namespace cumpi::protocol
