#include "protocol/completion.h"

#include <array>
#include <memory>
#include <vector>

#include "protocol/host_receives.h"
#include "protocol/operation_table.h"
#include "protocol/persistent.h"
#include "protocol/progress.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/inline_array.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

// A status array the engine can read even when the user passed
// MPI_STATUS(ES)_IGNORE; the user's ignore stands when cumpi will not read
// it (the MPI library then fills no statuses).
class StatusArray {
 public:
  StatusArray(MPI_Status* user, int count, bool cumpi_reads)
      : replaced_(cumpi_reads && user == MPI_STATUSES_IGNORE),
        user_(user),
        local_(replaced_ ? static_cast<std::size_t>(count > 0 ? count : 1) : 0) {}
  MPI_Status* get() { return replaced_ ? local_.data() : user_; }

 private:
  bool replaced_;
  MPI_Status* user_;
  runtime::InlineArray<MPI_Status, 32> local_;  // most calls: no allocation
};

// The user's requests as they were before a completion call, which sets
// those it completes to MPI_REQUEST_NULL, and the outcomes of cumpi's
// generalized requests among them (looked up while their handles are
// alive: MPI frees them inside the call).
class RequestsBefore {
 public:
  RequestsBefore(int count, const MPI_Request requests[]) : count_(count > 0 ? count : 0), now_(requests) {
    MPI_Request* copy = inline_.data();
    if (count_ > static_cast<int>(inline_.size())) {
      heap_.resize(static_cast<std::size_t>(count_));
      copy = heap_.data();
    }
    for (int i = 0; i < count_; ++i) copy[i] = requests[i];
    handles_ = copy;
    outcomes_of(count_, copy, &outcomes_);
    may_hold_direct_ = has_direct_receives();
    may_hold_persistent_ = operations().persistent_count() != 0;
  }
  MPI_Request handle(int i) const { return handles_[i]; }
  // Whether the MPI library freed request i in the call (it is now null
  // although it was persistent).
  bool released(int i) const { return now_[i] == MPI_REQUEST_NULL; }
  const Outcome* outcome(int i) const {
    return outcomes_.empty() ? nullptr : outcomes_[static_cast<std::size_t>(i)].get();
  }
  bool any_outcome() const { return !outcomes_.empty(); }
  // Whether a direct receive, or a persistent request of cumpi's, may be
  // among them. Decided before the call, once for all of them: what is
  // registered later is not among these requests.
  bool may_hold_direct() const { return may_hold_direct_; }
  bool may_hold_persistent() const { return may_hold_persistent_; }
  // Whether cumpi has a part in completing any of them.
  bool may_hold_ours() const { return any_outcome() || may_hold_direct_ || may_hold_persistent_; }

 private:
  int count_;
  bool may_hold_direct_ = false;
  bool may_hold_persistent_ = false;
  std::array<MPI_Request, 32> inline_;  // most calls: no allocation
  std::vector<MPI_Request> heap_;
  const MPI_Request* handles_ = nullptr;
  const MPI_Request* now_;  // the user's array, as the call leaves it
  std::vector<std::shared_ptr<Outcome>> outcomes_;
};

// cumpi's part in the completion of request `i`: a generalized request's
// error, a direct receive's examination, a persistent request's copy-back.
Finished finish_one(const RequestsBefore& before, int i, MPI_Status* status) {
  if (const Outcome* outcome = before.outcome(i)) {
    return Finished{true, outcome->comm, outcome->error, outcome->reported};
  }
  if (before.may_hold_direct()) {
    Finished direct = finish_direct_receive(before.handle(i), status);
    if (direct.ours) {
      return direct;
    }
  }
  if (before.may_hold_persistent()) {
    return complete_persistent(before.handle(i), status, before.released(i));
  }
  return Finished{};
}

// An error cumpi found, delivered as the MPI library delivers its own:
// through the handler of the request's communicator, and returned. One
// that MPI found completing an inner request had that handler run then.
Status deliver(int error, MPI_Comm comm, bool reported) {
  if (!reported) {
    real_mpi().Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, error);
  }
  return Status::mpi(error);
}

// After a call that completes at most one request (Wait, Test, Waitany,
// Testany) returned `rc` with request `index` of `before` complete.
Status finish_single(const RequestsBefore& before, int rc, int index, MPI_Status* status) {
  const Finished finished = finish_one(before, index, status);
  if (finished.error == MPI_SUCCESS) {
    return from_mpi(rc);
  }
  status->MPI_ERROR = finished.error;
  return rc != MPI_SUCCESS ? Status::mpi(rc) : deliver(finished.error, finished.comm, finished.reported);
}

// After a call that completes several (Waitall, Testall, Waitsome,
// Testsome) returned `rc`: the `completed` requests at `indices` (0.. when
// null) are finished; statuses are by request index or, with `by_position`
// false, by completion order. An error cumpi found makes the call's result
// MPI_ERR_IN_STATUS, with every completed status saying how it ended.
Status finish_many(const RequestsBefore& before, int rc, const int* indices, int completed, MPI_Status* statuses,
                   bool by_position) {
  if (!before.may_hold_ours()) {
    return from_mpi(rc);
  }
  bool failed = false;
  bool all_reported = true;
  MPI_Comm failed_comm = MPI_COMM_NULL;
  runtime::InlineArray<char, 32> ok(static_cast<std::size_t>(completed > 0 ? completed : 0), 0);
  for (int k = 0; k < completed; ++k) {
    const int i = indices == nullptr ? k : indices[k];
    MPI_Status* status = &statuses[by_position ? i : k];
    if (rc == MPI_ERR_IN_STATUS && status->MPI_ERROR != MPI_SUCCESS) {
      continue;  // pending, or failed in MPI: MPI's own report stands
    }
    const Finished finished = finish_one(before, i, status);
    if (finished.error != MPI_SUCCESS) {
      status->MPI_ERROR = finished.error;
      if (!failed) failed_comm = finished.comm;
      failed = true;
      all_reported = all_reported && finished.reported;
    } else {
      ok[static_cast<std::size_t>(k)] = 1;
    }
  }
  if (!failed) {
    return from_mpi(rc);
  }
  for (int k = 0; k < completed; ++k) {
    if (ok[static_cast<std::size_t>(k)] != 0) {
      statuses[by_position ? (indices == nullptr ? k : indices[k]) : k].MPI_ERROR = MPI_SUCCESS;
    }
  }
  return rc != MPI_SUCCESS ? Status::mpi(rc) : deliver(MPI_ERR_IN_STATUS, failed_comm, all_reported);
}

// Before testing: a call about one of cumpi's own operations progresses
// the engine every time (the operation completes only there); one about host
// requests alone now and then.
void sweep(const RequestsBefore& before) {
  if (before.any_outcome()) {
    progress_if_pending();
  } else {
    progress_now_and_then();
  }
}

// The waits as loops over the tests, which advance the engine: for calls
// that wait for one of cumpi's requests, while a peer waits for this rank,
// and under MPI_THREAD_MULTIPLE (a real Wait would keep the other threads
// out of the engine, and could not give it up: the engine's progress tests
// direct receives' requests, which must not be in a Wait meanwhile).
Status wait_advancing(MPI_Request* request, MPI_Status* status);
Status waitall_advancing(int count, MPI_Request requests[], MPI_Status statuses[]);
Status waitany_advancing(int count, MPI_Request requests[], int* index, MPI_Status* status);
Status waitsome_advancing(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);

}  // namespace

Status test(MPI_Request* request, int* flag, MPI_Status* status) {
  const RequestsBefore before(1, request);
  sweep(before);
  StatusArray local(status, 1, before.may_hold_ours());
  const int rc = real_mpi().Test(request, flag, local.get());
  return *flag != 0 ? finish_single(before, rc, 0, local.get()) : from_mpi(rc);
}

Status wait(MPI_Request* request, MPI_Status* status) {
  if (may_block_in_mpi()) {
    const RequestsBefore before(1, request);
    if (before.any_outcome()) return wait_advancing(request, status);
    StatusArray local(status, 1, before.may_hold_ours());
    const int rc = real_mpi().Wait(request, local.get());
    return finish_single(before, rc, 0, local.get());
  }
  return wait_advancing(request, status);
}

Status testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  const RequestsBefore before(count, requests);
  sweep(before);
  StatusArray local(statuses, count, before.may_hold_ours());
  const int rc = real_mpi().Testall(count, requests, flag, local.get());
  return *flag != 0 ? finish_many(before, rc, nullptr, count, local.get(), true) : from_mpi(rc);
}

Status waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (may_block_in_mpi()) {
    const RequestsBefore before(count, requests);
    if (before.any_outcome()) return waitall_advancing(count, requests, statuses);
    StatusArray local(statuses, count, before.may_hold_ours());
    const int rc = real_mpi().Waitall(count, requests, local.get());
    return finish_many(before, rc, nullptr, count, local.get(), true);
  }
  return waitall_advancing(count, requests, statuses);
}

Status testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  const RequestsBefore before(count, requests);
  sweep(before);
  StatusArray local(status, 1, before.may_hold_ours());
  const int rc = real_mpi().Testany(count, requests, index, flag, local.get());
  return *flag != 0 && *index != MPI_UNDEFINED ? finish_single(before, rc, *index, local.get()) : from_mpi(rc);
}

Status waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (may_block_in_mpi()) {
    const RequestsBefore before(count, requests);
    if (before.any_outcome()) return waitany_advancing(count, requests, index, status);
    StatusArray local(status, 1, before.may_hold_ours());
    const int rc = real_mpi().Waitany(count, requests, index, local.get());
    return *index != MPI_UNDEFINED ? finish_single(before, rc, *index, local.get()) : from_mpi(rc);
  }
  return waitany_advancing(count, requests, index, status);
}

Status testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  const RequestsBefore before(incount, requests);
  sweep(before);
  StatusArray local(statuses, incount, before.may_hold_ours());
  const int rc = real_mpi().Testsome(incount, requests, outcount, indices, local.get());
  const int completed = *outcount == MPI_UNDEFINED ? 0 : *outcount;
  return finish_many(before, rc, indices, completed, local.get(), false);
}

namespace {

Status wait_advancing(MPI_Request* request, MPI_Status* status) {
  int flag = 0;
  for (;;) {
    Status result = test(request, &flag, status);
    if (!result.is_ok() || flag != 0) {
      return result;
    }
    runtime::yield_engine();
  }
}

Status waitall_advancing(int count, MPI_Request requests[], MPI_Status statuses[]) {
  int flag = 0;
  for (;;) {
    Status result = testall(count, requests, &flag, statuses);
    if (!result.is_ok() || flag != 0) {
      return result;
    }
    runtime::yield_engine();
  }
}

Status waitany_advancing(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  int flag = 0;
  for (;;) {
    Status result = testany(count, requests, index, &flag, status);
    if (!result.is_ok() || flag != 0) {
      return result;
    }
    runtime::yield_engine();
  }
}

Status waitsome_advancing(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  for (;;) {
    Status result = testsome(incount, requests, outcount, indices, statuses);
    if (!result.is_ok() || *outcount != 0) {
      return result;
    }
    runtime::yield_engine();
  }
}

}  // namespace

Status waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (may_block_in_mpi()) {
    const RequestsBefore before(incount, requests);
    if (before.any_outcome()) return waitsome_advancing(incount, requests, outcount, indices, statuses);
    StatusArray local(statuses, incount, before.may_hold_ours());
    const int rc = real_mpi().Waitsome(incount, requests, outcount, indices, local.get());
    const int completed = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    return finish_many(before, rc, indices, completed, local.get(), false);
  }
  return waitsome_advancing(incount, requests, outcount, indices, statuses);
}

Status request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (outcome_of(request) != nullptr) {
    progress_if_pending();
  } else {
    progress_now_and_then();
  }
  StatusArray local(status, 1, true);
  const int rc = real_mpi().Request_get_status(request, flag, local.get());
  if (rc != MPI_SUCCESS || *flag == 0) {
    return from_mpi(rc);
  }
  // Looked at now, once: the completing call finds it done.
  Finished finished;
  if (const std::shared_ptr<Outcome> outcome = outcome_of(request)) {
    finished = Finished{true, outcome->comm, outcome->error, outcome->reported};
  } else if (has_direct_receives()) {
    finished = peek_direct_receive(request, local.get());
  }
  if (!finished.ours) {
    finished = complete_persistent(request, local.get(), false);
  }
  local.get()->MPI_ERROR = finished.error;
  return Status::ok();
}

Status request_free(MPI_Request* request) {
  progress_now_and_then();
  int rc = MPI_SUCCESS;
  if (!free_persistent(request, &rc) && !free_direct_receive(request)) {
    rc = real_mpi().Request_free(request);
  }
  return from_mpi(rc);
}

Status start(MPI_Request* request) { return startall(1, request); }

Status startall(int count, MPI_Request requests[]) {
  runtime::InlineArray<PersistentOperation*, 32> operations(static_cast<std::size_t>(count > 0 ? count : 0));
  Status prepared = prepare_starts(count, requests, operations.data());
  if (!prepared.is_ok()) {
    return prepared;
  }
  const int rc = count == 1 ? real_mpi().Start(requests) : real_mpi().Startall(count, requests);
  if (rc == MPI_SUCCESS) {
    mark_started(count, operations.data(), requests);
  }
  return from_mpi(rc);
}

}  // namespace cumpi::protocol
