#include "protocol/progress.h"

#include "memory/backend.h"
#include "memory/copy_batches.h"
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
  Operation* operation = operations().find_pending(outcome);
  return operation == nullptr ? MPI_SUCCESS : operation->cancel();
}

void progress_pending(OperationTable& table) {
  std::vector<Operation*>& pending = table.pending();
  for (std::size_t i = 0; i < pending.size();) {
    if (!pending[i]->advance()) {
      ++i;
      continue;
    }
    const std::unique_ptr<Operation> done = table.take_pending(i);
    real_mpi().Grequest_complete(done->user);
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
  memory::backend().flush_copies();  // the copies this sweep queued, in one batch
}

void progress_on_entry() {
  const memory::HoldCopySubmissions hold;
  progress();
}

Status track(std::unique_ptr<Operation> operation, MPI_Request* user_request) {
  auto* reference = new OutcomeRef(operation->outcome);
  const int rc =
      real_mpi().Grequest_start(query_operation, free_operation, cancel_operation, reference, &operation->user);
  if (rc != MPI_SUCCESS) {
    delete reference;
    // What is posted cannot be taken back: finish it here.
    while (!operation->advance()) {
      progress();
    }
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
  // Sends freed with MPI_Request_free may still wait for their FIN.
  CUMPI_LOG(debug, "%zu device operations still pending at MPI_Finalize; completing them",
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
