#include "protocol/completion.h"

#include <vector>

#include "protocol/operation_table.h"
#include "protocol/persistent.h"
#include "protocol/progress.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

// The first failure wins; an MPI error code stands as it came.
Status first_failure(Status mpi_result, Status copy_result) {
  return mpi_result.is_ok() ? std::move(copy_result) : std::move(mpi_result);
}

// A status array the engine can read even when the user passed
// MPI_STATUS(ES)_IGNORE.
class StatusArray {
 public:
  StatusArray(MPI_Status* user, int count) : user_(user) {
    if (user == MPI_STATUSES_IGNORE) {
      local_.resize(static_cast<std::size_t>(count > 0 ? count : 1));
    }
  }
  MPI_Status* get() { return user_ == MPI_STATUSES_IGNORE ? local_.data() : user_; }

 private:
  MPI_Status* user_;
  std::vector<MPI_Status> local_;
};

// Copy-back for the persistent device requests among `handles` at
// `indices` (all of them when indices is null).
Status complete_indices(const std::vector<MPI_Request>& handles, const int* indices, int completed,
                        MPI_Status* statuses, bool statuses_by_position) {
  Status result;
  if (operations().persistent_count() == 0) {
    return result;
  }
  for (int k = 0; k < completed; ++k) {
    const int i = indices == nullptr ? k : indices[k];
    MPI_Status* status = &statuses[statuses_by_position ? i : k];
    Status copied = complete_persistent(handles[static_cast<std::size_t>(i)], status);
    if (result.is_ok()) {
      result = std::move(copied);
    }
  }
  return result;
}

std::vector<MPI_Request> copy_handles(int count, const MPI_Request requests[]) {
  return std::vector<MPI_Request>(requests, requests + (count > 0 ? count : 0));
}

}  // namespace

Status test(MPI_Request* request, int* flag, MPI_Status* status) {
  progress_if_pending();
  const MPI_Request handle = *request;
  StatusArray local(status, 1);
  const int rc = real_mpi().Test(request, flag, local.get());
  Status copied = *flag != 0 ? complete_persistent(handle, local.get()) : Status::ok();
  return first_failure(from_mpi(rc), std::move(copied));
}

Status wait(MPI_Request* request, MPI_Status* status) {
  if (operations().pending_count() == 0) {
    const MPI_Request handle = *request;
    StatusArray local(status, 1);
    const int rc = real_mpi().Wait(request, local.get());
    return first_failure(from_mpi(rc), complete_persistent(handle, local.get()));
  }
  int flag = 0;
  for (;;) {
    Status result = test(request, &flag, status);
    if (!result.is_ok() || flag != 0) {
      return result;
    }
  }
}

Status testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  progress_if_pending();
  const std::vector<MPI_Request> handles = copy_handles(count, requests);
  StatusArray local(statuses, count);
  const int rc = real_mpi().Testall(count, requests, flag, local.get());
  Status copied = (rc == MPI_SUCCESS && *flag != 0) ? complete_indices(handles, nullptr, count, local.get(), true)
                                                    : Status::ok();
  return first_failure(from_mpi(rc), std::move(copied));
}

Status waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (operations().pending_count() == 0) {
    const std::vector<MPI_Request> handles = copy_handles(count, requests);
    StatusArray local(statuses, count);
    const int rc = real_mpi().Waitall(count, requests, local.get());
    Status copied = rc == MPI_SUCCESS ? complete_indices(handles, nullptr, count, local.get(), true) : Status::ok();
    return first_failure(from_mpi(rc), std::move(copied));
  }
  int flag = 0;
  for (;;) {
    Status result = testall(count, requests, &flag, statuses);
    if (!result.is_ok() || flag != 0) {
      return result;
    }
  }
}

Status testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  progress_if_pending();
  const std::vector<MPI_Request> handles = copy_handles(count, requests);
  StatusArray local(status, 1);
  const int rc = real_mpi().Testany(count, requests, index, flag, local.get());
  Status copied = (*flag != 0 && *index != MPI_UNDEFINED) ? complete_indices(handles, index, 1, local.get(), false)
                                                          : Status::ok();
  return first_failure(from_mpi(rc), std::move(copied));
}

Status waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (operations().pending_count() == 0) {
    const std::vector<MPI_Request> handles = copy_handles(count, requests);
    StatusArray local(status, 1);
    const int rc = real_mpi().Waitany(count, requests, index, local.get());
    Status copied = *index != MPI_UNDEFINED ? complete_indices(handles, index, 1, local.get(), false) : Status::ok();
    return first_failure(from_mpi(rc), std::move(copied));
  }
  int flag = 0;
  for (;;) {
    Status result = testany(count, requests, index, &flag, status);
    if (!result.is_ok() || flag != 0) {
      return result;
    }
  }
}

Status testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  progress_if_pending();
  const std::vector<MPI_Request> handles = copy_handles(incount, requests);
  StatusArray local(statuses, incount);
  const int rc = real_mpi().Testsome(incount, requests, outcount, indices, local.get());
  Status copied = (*outcount != MPI_UNDEFINED && *outcount > 0)
                      ? complete_indices(handles, indices, *outcount, local.get(), false)
                      : Status::ok();
  return first_failure(from_mpi(rc), std::move(copied));
}

Status waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (operations().pending_count() == 0) {
    const std::vector<MPI_Request> handles = copy_handles(incount, requests);
    StatusArray local(statuses, incount);
    const int rc = real_mpi().Waitsome(incount, requests, outcount, indices, local.get());
    Status copied = (*outcount != MPI_UNDEFINED && *outcount > 0)
                        ? complete_indices(handles, indices, *outcount, local.get(), false)
                        : Status::ok();
    return first_failure(from_mpi(rc), std::move(copied));
  }
  for (;;) {
    Status result = testsome(incount, requests, outcount, indices, statuses);
    if (!result.is_ok() || *outcount != 0) {
      return result;
    }
  }
}

Status request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  progress_if_pending();
  StatusArray local(status, 1);
  const int rc = real_mpi().Request_get_status(request, flag, local.get());
  // The copy-back happens now, once: the later wait finds it done.
  Status copied = *flag != 0 ? complete_persistent(request, local.get()) : Status::ok();
  return first_failure(from_mpi(rc), std::move(copied));
}

Status request_free(MPI_Request* request) {
  progress_if_pending();
  int rc = MPI_SUCCESS;
  if (!free_persistent(request, &rc)) {
    rc = real_mpi().Request_free(request);
  }
  return from_mpi(rc);
}

Status start(MPI_Request* request) {
  Status prepared = prepare_start(request);
  if (!prepared.is_ok()) {
    return prepared;
  }
  const MPI_Request before = *request;
  const int rc = real_mpi().Start(request);
  if (rc == MPI_SUCCESS) {
    mark_started(before, *request);
  }
  return from_mpi(rc);
}

Status startall(int count, MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) {
    Status prepared = prepare_start(&requests[i]);
    if (!prepared.is_ok()) {
      return prepared;
    }
  }
  const std::vector<MPI_Request> before = copy_handles(count, requests);
  const int rc = real_mpi().Startall(count, requests);
  if (rc == MPI_SUCCESS) {
    for (int i = 0; i < count; ++i) {
      mark_started(before[static_cast<std::size_t>(i)], requests[i]);
    }
  }
  return from_mpi(rc);
}

}  // namespace cumpi::protocol
