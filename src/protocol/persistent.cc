#include "protocol/persistent.h"

#include <utility>

#include "protocol/matched_queue.h"
#include "protocol/pull.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/status_bytes.h"

namespace cumpi::protocol {

namespace {

// Plain data into a persistent receive; one that landed whole is
// truncated here as MPI would have, status included.
Status finish_plain_persistent(ReceiveTarget& target, std::size_t received, MPI_Status* status) {
  Status finished = target.finish_plain(received);
  if (!finished.is_ok() || received <= target.capacity()) {
    return finished;
  }
  report_status(status, status->MPI_SOURCE, status->MPI_TAG, truncated_count(received, target.capacity()),
                MPI_ERR_TRUNCATE);
  return truncated_receive(target.capacity());
}

void count_active_receive(const PersistentOperation& operation, bool started) {
  if (!operation.is_receive) {
    return;
  }
  // Whether active receives need progress changes only with the count's
  // first and last (a window restarts its receives every round).
  const std::size_t before = started ? g_active_persistent_receives.fetch_add(1, std::memory_order_relaxed)
                                     : g_active_persistent_receives.fetch_sub(1, std::memory_order_relaxed);
  if (before == (started ? 0U : 1U)) {
    update_progress_work();
  }
}

// What arrived in a completed persistent receive: plain data copied back, or
// the message an envelope announced pulled (blocking: the request is
// complete now) and the status corrected.
Status finish_arrival(PersistentOperation& operation, MPI_Status* status) {
  const std::size_t received = status_bytes(*status);
  if (!may_be_envelope(received)) {
    return finish_plain_persistent(operation.target, received, status);  // a cancelled receive got 0 bytes
  }
  const RealMpi& mpi = real_mpi();
  int cancelled = 0;
  mpi.Test_cancelled(status, &cancelled);
  if (cancelled != 0) {
    return Status::ok();
  }
  Envelope envelope;
  bool arrived = false;
  Status looked = operation.target.envelope_arrived(received, operation.comm, status->MPI_SOURCE, &envelope, &arrived);
  if (!looked.is_ok()) {
    return looked;
  }
  if (!arrived) {
    return finish_plain_persistent(operation.target, received, status);
  }
  return pull_now(envelope, &operation.target, status);
}

// Finishes a completed persistent request for its completion call (the
// user's, or the progress engine's for one freed while active); a receive
// the engine finished early reports what it kept.
Status finish_completed(PersistentOperation& operation, MPI_Status* status) {
  if (operation.active) {
    operation.active = false;
    count_active_receive(operation, false);
  }
  if (!operation.is_receive) {
    return Status::ok();
  }
  if (operation.finished_early) {
    operation.finished_early = false;
    *status = operation.early_status;
    return std::exchange(operation.early_result, Status::ok());
  }
  return finish_arrival(operation, status);
}

// Frees the operation's request and makes a new one; the user's handle
// follows (see PersistentOperation::buffered).
Status remake_buffered_request(PersistentOperation& operation, MPI_Request* user_handle) {
  int rc = real_mpi().Request_free(&operation.request);
  if (rc == MPI_SUCCESS) {
    rc = make_buffered_request(operation, &operation.request);
  }
  *user_handle = operation.request;
  operations().persistent_request_changed();
  return from_mpi(rc);
}

}  // namespace

int make_buffered_request(const PersistentOperation& operation, MPI_Request* request) {
  const PersistentOperation::BufferedMessage& message = *operation.buffered;
  return real_mpi().Bsend_init(operation.staged.mpi_pointer(), message.count, message.type, message.dest, message.tag,
                               message.comm, request);
}

PersistentOperation::~PersistentOperation() {
  if (buffered != nullptr) {
    real_mpi().Type_free(&buffered->type);
  }
}

void add_persistent(std::unique_ptr<PersistentOperation> operation) {
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  operations().add_persistent(std::move(operation));
}

namespace {

// prepare_starts for one request, under the table's lock.
Status prepare_start_locked(MPI_Request* request, PersistentOperation** started) {
  PersistentOperation* operation = operations().find_persistent(*request);
  *started = operation;
  if (operation == nullptr) {
    return Status::ok();
  }
  if (operation->is_receive) {
    return operation->target.refresh_holes();
  }
  Status refreshed = operation->staged.refresh_from_device();
  if (!refreshed.is_ok() || operation->buffered == nullptr) {
    return refreshed;
  }
  return remake_buffered_request(*operation, request);
}

}  // namespace

Status prepare_starts(int count, MPI_Request requests[], PersistentOperation* started[]) {
  for (int i = 0; i < count; ++i) started[i] = nullptr;
  if (operations().persistent_count() == 0) {
    return Status::ok();
  }
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  for (int i = 0; i < count; ++i) {
    Status prepared = prepare_start_locked(&requests[i], &started[i]);
    if (!prepared.is_ok()) {
      return prepared;
    }
  }
  return Status::ok();
}

void mark_started(int count, PersistentOperation* const started[], const MPI_Request requests[]) {
  if (operations().persistent_count() == 0) {
    return;
  }
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  for (int i = 0; i < count; ++i) {
    PersistentOperation* operation = started[i];
    if (operation == nullptr) continue;
    if (!operation->active) {
      count_active_receive(*operation, true);
    }
    operation->active = true;
    operation->finished_early = false;
    if (operation->request != requests[i]) {
      operation->request = requests[i];
      operations().persistent_request_changed();
    }
  }
}

Finished complete_persistent(MPI_Request request, MPI_Status* status, bool released) {
  Finished finished;
  if (operations().persistent_count() == 0) {
    return finished;
  }
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  PersistentOperation* operation = operations().find_persistent(request);
  if (operation == nullptr || !operation->active) {
    return finished;
  }
  finished.ours = true;
  finished.comm = operation->comm;
  Status result = finish_completed(*operation, status);
  // An error the MPI library returned has had its handler already.
  finished.error = result.code() == StatusCode::mpi_error ? MPI_SUCCESS : request_error_code(result);
  if (released) {
    std::unique_ptr<PersistentOperation> taken = operations().take_persistent(request);
  }
  return finished;
}

bool free_persistent(MPI_Request* request, int* result) {
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  PersistentOperation* operation = operations().find_persistent(*request);
  if (operation == nullptr) {
    return false;
  }
  if (operation->active) {
    // Still in flight: the request must stay alive to be tested; the user's
    // handle is released now, as MPI_Request_free does.
    operation->freed_by_user = true;
    operations().publish_orphans();
    *request = MPI_REQUEST_NULL;
    *result = MPI_SUCCESS;
    return true;
  }
  std::unique_ptr<PersistentOperation> taken = operations().take_persistent(*request);
  *result = real_mpi().Request_free(request);
  return true;
}

void progress_active_persistent_receives(OperationTable& table) {
  for (PersistentOperation* operation : table.active_persistent_receives()) {
    int flag = 0;
    MPI_Status status{};
    // Asks without completing: the request stays the user's to complete.
    if (real_mpi().Request_get_status(operation->request, &flag, &status) != MPI_SUCCESS || flag == 0) {
      continue;
    }
    operation->early_result = finish_arrival(*operation, &status);
    operation->early_status = status;
    operation->finished_early = true;
  }
}

void progress_orphaned_persistent(OperationTable& table) {
  for (PersistentOperation* orphan : table.orphaned_persistent()) {
    int flag = 0;
    MPI_Status status{};
    MPI_Request request = orphan->request;
    if (real_mpi().Test(&request, &flag, &status) != MPI_SUCCESS || flag != 0) {
      Status copied = finish_completed(*orphan, &status);
      if (!copied.is_ok()) {
        CUMPI_LOG(error, "%s", copied.message().c_str());
      }
      std::unique_ptr<PersistentOperation> taken = table.take_persistent(orphan->request);
      if (request != MPI_REQUEST_NULL) {
        real_mpi().Request_free(&request);  // unless MPI freed it with its error
      }
    }
  }
}

}  // namespace cumpi::protocol
