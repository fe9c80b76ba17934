#include "protocol/progress.h"

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "memory/copy_batches.h"
#include "protocol/envelope_grants.h"
#include "protocol/host_receives.h"
#include "protocol/persistent.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"
#include "transport/registry.h"

namespace cumpi::protocol {

namespace {

// Generalized-request callbacks. MPI calls them from inside PMPI_Wait/Test
// (query), PMPI_Request_free or the completing call (free) and PMPI_Cancel
// (cancel). Their extra state is a heap-held reference to the outcome.
using OutcomeRef = std::shared_ptr<Outcome>;

// cumpi's generalized requests by handle, from MPI_Grequest_start until MPI
// frees them: the completion calls look up the outcome of each before the
// real call (a handle is unique while its request lives).
class GeneralizedRequests {
 public:
  void add(MPI_Request request, const OutcomeRef& outcome) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace_back(request, outcome);
    g_generalized_requests.store(live_.size(), std::memory_order_relaxed);
  }
  void remove(const Outcome* outcome) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < live_.size(); ++i) {
      if (live_[i].second.get() == outcome) {
        live_[i] = live_.back();
        live_.pop_back();
        break;
      }
    }
    g_generalized_requests.store(live_.size(), std::memory_order_relaxed);
  }
  OutcomeRef find(MPI_Request request) {
    std::lock_guard<std::mutex> lock(mutex_);
    return find_locked(request);
  }
  // The outcomes of `count` requests, under one lock; `out` stays empty when
  // none is cumpi's. Live requests are few (those of device operations in
  // flight): the user's array is scanned once for each, a tight loop of
  // compares.
  void find_all(int count, const MPI_Request* requests, std::vector<OutcomeRef>* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [handle, outcome] : live_) {
      for (int i = 0; i < count; ++i) {
        if (requests[i] != handle) continue;
        out->resize(static_cast<std::size_t>(count));
        (*out)[static_cast<std::size_t>(i)] = outcome;
        break;  // a live handle is unique
      }
    }
  }

 private:
  OutcomeRef find_locked(MPI_Request request) const {
    for (const auto& [handle, outcome] : live_) {
      if (handle == request) return outcome;
    }
    return nullptr;
  }

  std::mutex mutex_;
  std::vector<std::pair<MPI_Request, OutcomeRef>> live_;
};

GeneralizedRequests& generalized_requests() {
  static GeneralizedRequests* requests = new GeneralizedRequests();  // lives until exit
  return *requests;
}

// The status MPI gets says success: an error would be reported by the MPI
// library through MPI_COMM_WORLD's handler, and cumpi's completion calls
// report it through the operation's communicator instead.
int query_operation(void* extra_state, MPI_Status* status) {
  const Outcome& outcome = **static_cast<OutcomeRef*>(extra_state);
  const RealMpi& mpi = real_mpi();
  status->MPI_SOURCE = outcome.status.MPI_SOURCE;
  status->MPI_TAG = outcome.status.MPI_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  mpi.Status_set_elements_x(status, MPI_BYTE, outcome.received_bytes);
  mpi.Status_set_cancelled(status, outcome.cancelled ? 1 : 0);
  return MPI_SUCCESS;
}

int free_operation(void* extra_state) {
  auto* outcome = static_cast<OutcomeRef*>(extra_state);
  generalized_requests().remove(outcome->get());
  delete outcome;
  return MPI_SUCCESS;
}

int cancel_operation(void* extra_state, int complete) {
  if (complete != 0) {
    return MPI_SUCCESS;
  }
  const Outcome* outcome = static_cast<OutcomeRef*>(extra_state)->get();
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  Operation* operation = operations().find_pending(outcome);
  return operation == nullptr ? MPI_SUCCESS : operation->cancel();
}

thread_local bool t_on_entry __attribute__((tls_model("initial-exec"))) = false;
thread_local unsigned t_entries __attribute__((tls_model("initial-exec"))) = 0;
thread_local unsigned t_sweeps __attribute__((tls_model("initial-exec"))) = 0;

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
  {
    // Taken by this thread already when an operation's advance progresses.
    std::unique_lock<runtime::ThreadsMutex> lock(table.mutex(), std::try_to_lock);
    if (!lock.owns_lock()) {
      return;
    }
    const runtime::EngineBusy busy;  // iterates the table
    progress_pending(table);
    table.publish_service();
    if (table.persistent_count() != 0) {
      progress_orphaned_persistent(table);
      if (!t_on_entry && g_active_persistent_receives.load(std::memory_order_relaxed) != 0) {
        progress_active_persistent_receives(table);
      }
    }
  }
  progress_freed_direct_receives();
  // Direct receives are looked at by calls that wait or test, not on entry
  // to every call: each look asks MPI about each of them, and one holding an
  // envelope is pulled at once, which must not wait for held copies.
  if (!t_on_entry) {
    progress_direct_receives();
  }
  serve_grants();
  transport::transports().progress_all();  // the IPC copies this sweep queued go in one batch
}

// Every call entered while device operations are pending progresses them,
// one call in kSweepEvery.
void progress_on_entry() {
  if (++t_entries % kSweepEvery != 0) {
    return;
  }
  const memory::HoldCopySubmissions hold;
  t_on_entry = true;
  progress();
  t_on_entry = false;
}

void progress_now_and_then() {
  if (++t_sweeps % kSweepEvery == 0 && needs_service()) {
    progress();
  }
}

Status wait_serving(MPI_Request* request, MPI_Status* status) {
  for (;;) {
    int flag = 0;
    const int rc = real_mpi().Test(request, &flag, status);
    if (rc != MPI_SUCCESS || flag != 0) {
      return from_mpi(rc);
    }
    progress_now_and_then();
    runtime::yield_engine();
  }
}

std::shared_ptr<Outcome> outcome_of(MPI_Request request) {
  return has_generalized_requests() ? generalized_requests().find(request) : nullptr;
}

void outcomes_of(int count, const MPI_Request requests[], std::vector<std::shared_ptr<Outcome>>* outcomes) {
  if (has_generalized_requests()) {
    generalized_requests().find_all(count, requests, outcomes);
  }
}

Status track(std::unique_ptr<Operation> operation, MPI_Request* user_request, MPI_Comm comm) {
  operation->outcome->comm = comm;
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
  generalized_requests().add(operation->user, operation->outcome);
  std::lock_guard<runtime::ThreadsMutex> lock(operations().mutex());
  operations().add_pending(std::move(operation));
  return Status::ok();
}

namespace {

class CompletedOperation final : public Operation {
 public:
  CompletedOperation() {
    outcome->status.MPI_SOURCE = MPI_ANY_SOURCE;
    outcome->status.MPI_TAG = MPI_ANY_TAG;
    outcome->status.MPI_ERROR = MPI_SUCCESS;
  }
  bool advance() override { return true; }
};

}  // namespace

Status track_completed(MPI_Request* user_request, MPI_Comm comm) {
  return track(std::make_unique<CompletedOperation>(), user_request, comm);
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
