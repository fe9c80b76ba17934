#include "protocol/watched_receive.h"

#include <mutex>
#include <utility>
#include <vector>

#include "protocol/envelope_grants.h"
#include "protocol/host_receives.h"
#include "protocol/progress.h"
#include "protocol/short_envelope.h"
#include "protocol/type_size_cache.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/status_bytes.h"

namespace cumpi::protocol {

WatchedReceive::~WatchedReceive() {
  if (private_key_ != 0) {
    remove_private_receive(private_key_);
  }
}

// A host receive comes here when it cannot land straight in the user's
// memory (host_receives.h): a nonblocking one lands privately, a blocking
// one does when it overlaps a pending receive. Its bytes are registered
// while it is pending, so that later receives see the overlap.
Status WatchedReceive::prepare(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where,
                               bool blocking) {
  Status status = ReceiveTarget::prepare(buffer, count, type, where, false, &target_);
  if (!status.is_ok()) {
    return status;
  }
  target_.land_stand_ins_whole();
  if (target_.on_device() || target_.host_first() == target_.host_last()) {
    return status;
  }
  const std::uintptr_t first = target_.host_first();
  const std::uintptr_t last = target_.host_last();
  // A receive that lands whole lands privately already.
  if (!target_.lands_whole() && (!blocking || overlaps_pending_receive(first, last))) {
    status = ReceiveTarget::prepare(buffer, count, type, where, true, &target_);
  }
  private_key_ = add_private_receive(first, last);
  return status;
}

Status WatchedReceive::start(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, int source,
                             int tag, MPI_Comm comm, bool blocking) {
  Status status = prepare(buffer, count, type, where, blocking);
  if (!status.is_ok()) {
    return status;
  }
  // A device receive answers the peers that asked to send this rank
  // envelopes: their device messages take IPC or the pipeline once it did.
  if (target_.on_device()) {
    serve_grants_now();
  }
  comm_ = comm;
  if (has_queued_messages()) {
    if (std::unique_ptr<QueuedMessage> queued = matched_queue().pop(comm, source, tag)) {
      return take_queued(std::move(queued));
    }
  }
  return from_mpi(
      real_mpi().Irecv(target_.post_buffer(), target_.post_count(), target_.post_type(), source, tag, comm, &inner_));
}

Status WatchedReceive::start_queued(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where,
                                    std::unique_ptr<QueuedMessage> message) {
  if (message == nullptr) {
    return Status::error(StatusCode::internal, "unknown message handle");
  }
  Status status = prepare(buffer, count, type, where, true);
  return status.is_ok() ? take_queued(std::move(message)) : status;
}

Status WatchedReceive::take_queued(std::unique_ptr<QueuedMessage> message) {
  queued_ = std::move(message);
  matched_.MPI_SOURCE = queued_->source;
  matched_.MPI_TAG = queued_->tag;
  if (queued_->is_envelope) {
    pulling_ = true;
    return pull_.start(queued_->envelope, &target_);
  }
  const std::size_t bytes = queued_->bytes.size();
  Status delivered = target_.deliver_packed(queued_->bytes.data(), bytes);
  const bool truncated = bytes > target_.capacity();
  complete(delivered.is_ok() ? (truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS) : request_error_code(delivered),
           truncated ? truncated_count(bytes, target_.capacity()) : bytes);
  return Status::ok();
}

bool WatchedReceive::inner_completed() {
  int flag = 0;
  const int rc = real_mpi().Test(&inner_, &flag, &matched_);
  if (rc == MPI_SUCCESS && flag == 0) {
    return false;
  }
  inner_ = MPI_REQUEST_NULL;
  int cancelled = 0;
  real_mpi().Test_cancelled(&matched_, &cancelled);
  const std::size_t received = status_bytes(matched_);
  Envelope envelope;
  bool envelope_arrived = false;
  Status looked = (cancelled == 0 && rc == MPI_SUCCESS)
                      ? target_.envelope_arrived(received, comm_, matched_.MPI_SOURCE, &envelope, &envelope_arrived)
                      : Status::ok();
  if (cancelled != 0) {
    outcome->cancelled = true;
    complete(MPI_SUCCESS, 0);
  } else if (!looked.is_ok()) {
    complete(request_error_code(looked), 0);
  } else if (envelope_arrived) {
    pulling_ = true;
    Status started = pull_.start(envelope, &target_);
    if (!started.is_ok()) {
      complete(request_error_code(started), 0);
    }
  } else {
    const bool arrived = rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE;
    Status finished = arrived ? target_.finish_plain(received) : Status::ok();
    error_from_mpi_ = rc != MPI_SUCCESS && finished.is_ok();
    // Landed whole, plain data larger than the receive is truncated here.
    const bool truncated_here = rc == MPI_SUCCESS && received > target_.capacity();
    const int code = !finished.is_ok() ? request_error_code(finished) : (truncated_here ? MPI_ERR_TRUNCATE : rc);
    complete(code, truncated_here ? truncated_count(received, target_.capacity()) : received);
  }
  return true;
}

bool WatchedReceive::advance() {
  if (done_) {
    return true;
  }
  if (!pulling_) {
    // A pull that starts here has its copy queued: it is polled from the
    // next sweep on, once the copies this sweep queues went as one batch.
    return inner_completed() && !pulling_ && done_;
  }
  if (!done_) {
    Status error;
    if (!pull_.advance(&error)) {
      return false;
    }
    const int code = !error.is_ok() ? request_error_code(error) : (pull_.truncated() ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    complete(code, pull_.reported_count());
  }
  return done_;
}

void WatchedReceive::complete(int error, std::size_t bytes) {
  outcome->status = matched_;
  outcome->error = error;
  outcome->reported = error_from_mpi_;
  outcome->received_bytes = static_cast<MPI_Count>(bytes);
  done_ = true;
}

int WatchedReceive::cancel() { return inner_ == MPI_REQUEST_NULL ? MPI_SUCCESS : real_mpi().Cancel(&inner_); }

Status run_to_completion(WatchedReceive& operation, MPI_Status* status) {
  while (!operation.advance()) {
    progress_if_pending();
    serve_grants();
    runtime::yield_engine();
  }
  const Outcome& result = *operation.outcome;
  if (status != MPI_STATUS_IGNORE) {
    report_status(status, result.status.MPI_SOURCE, result.status.MPI_TAG,
                  static_cast<std::size_t>(result.received_bytes), result.error);
    real_mpi().Status_set_cancelled(status, result.cancelled ? 1 : 0);
  }
  if (result.error == MPI_SUCCESS) {
    return Status::ok();
  }
  if (operation.error_from_mpi()) {
    return Status::mpi(result.error);
  }
  if (result.error == MPI_ERR_TRUNCATE) {
    return truncated_receive(static_cast<std::size_t>(result.received_bytes));
  }
  return Status::error(StatusCode::internal, "receive failed with MPI error " + std::to_string(result.error));
}

Status watched_recv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
                    MPI_Comm comm, MPI_Status* status) {
  WatchedReceive operation;
  Status started = operation.start(buffer, count, type, where, source, tag, comm, true);
  if (!started.is_ok()) {
    return started;
  }
  return run_to_completion(operation, status);
}

Status watched_irecv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  auto operation = std::make_unique<WatchedReceive>();
  Status started = operation->start(buffer, count, type, where, source, tag, comm);
  if (!started.is_ok()) {
    return started;
  }
  return track(std::move(operation), request, comm);
}

namespace {

// Elements of `type` lie back to back from the buffer's first byte, each in
// MPI's packed order: the buffer's first bytes are the message's.
bool lands_packed(MPI_Datatype type) {
  memory::TypeLayout layout;
  return memory::query_layout(type, &layout).is_ok() && layout.element_in_order && layout.true_lb == 0 &&
         layout.extent == layout.size;
}

// The size of `type`: the thread's cached one, else MPI's (then cached).
// False for a datatype MPI refuses: the real call reports it.
bool type_size_of(MPI_Datatype type, long long* size) {
  if (cached_type_size(type, size)) {
    return true;
  }
  MPI_Count queried = 0;  // types past 2 GiB too, which MPI_Type_size calls MPI_UNDEFINED
  if (real_mpi().Type_size_x(type, &queried) != MPI_SUCCESS) {
    return false;
  }
  *size = queried;
  remember_type_size(type, *size, lands_packed(type));
  return true;
}

// A watched host receive smaller than an envelope (on a rank that takes
// short envelopes) goes through WatchedReceive, which lands it whole.
bool smaller_than_envelope(int count, MPI_Datatype type) {
  long long size = 0;
  return type_size_of(type, &size) &&
         static_cast<unsigned long long>(count) * static_cast<unsigned long long>(size) < kEnvelopeBytes;
}

}  // namespace

Status host_irecv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  // A message a probe took out of MPI comes first, as MPI's order wants.
  if (has_queued_messages() && matched_queue().find(comm, source, tag) != nullptr) {
    return watched_irecv(buffer, count, type, memory::kHostMemory, source, tag, comm, request);
  }
  if (smaller_than_envelope(count, type)) {
    return watched_irecv(buffer, count, type, memory::kHostMemory, source, tag, comm, request);
  }
  bool posted = false;
  Status status = post_direct_receive(buffer, count, type, source, tag, comm, request, &posted);
  if (!status.is_ok() || posted) {
    return status;
  }
  return watched_irecv(buffer, count, type, memory::kHostMemory, source, tag, comm, request);
}

namespace {

// A plain message too small for an envelope, read without looking at the
// receive's layout where its type's data lies packed: not a token.
bool surely_not_short_envelope(const void* buffer, MPI_Datatype type, std::size_t received) {
  bool packed = false;
  if (received >= kEnvelopeBytes || !cached_type_packed(type, &packed) || !packed) {
    return false;
  }
  std::uint32_t slot = 0;
  int sender = -1;
  return !token_arrived(static_cast<const unsigned char*>(buffer), received, &sender, &slot);
}

}  // namespace

Status look_at_host_receive(void* buffer, int count, MPI_Datatype type, MPI_Comm comm, std::size_t received,
                            MPI_Status* result) {
  if (!may_be_envelope(received) || surely_not_short_envelope(buffer, type, received)) {
    return Status::ok();
  }
  ReceiveTarget target;
  Envelope envelope;
  bool arrived = false;
  Status prepared = ReceiveTarget::prepare(buffer, count, type, memory::kHostMemory, false, &target);
  if (prepared.is_ok()) {
    prepared = target.envelope_arrived(received, comm, result->MPI_SOURCE, &envelope, &arrived);
  }
  if (!prepared.is_ok() || !arrived) {
    return prepared;
  }
  return pull_now(envelope, &target, result);
}

bool must_land_privately(const void* buffer, int count, MPI_Datatype type) {
  return envelopes_may_arrive() && overlaps_pending_receive(buffer, count, type);
}

Status host_recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  serve_grants();
  if (has_queued_messages() || smaller_than_envelope(count, type) || must_land_privately(buffer, count, type)) {
    return watched_recv(buffer, count, type, memory::kHostMemory, source, tag, comm, status);
  }
  MPI_Status local{};
  MPI_Status* result = status == MPI_STATUS_IGNORE ? &local : status;
  if (may_block_in_mpi()) {
    const int rc = real_mpi().Recv(buffer, count, type, source, tag, comm, result);
    if (rc != MPI_SUCCESS) {
      return from_mpi(rc);
    }
  } else {
    MPI_Request request = MPI_REQUEST_NULL;
    Status received = from_mpi(real_mpi().Irecv(buffer, count, type, source, tag, comm, &request));
    if (received.is_ok()) received = wait_serving(&request, result);
    if (!received.is_ok()) {
      return received;
    }
  }
  return look_at_host_receive(buffer, count, type, comm, status_bytes(*result), result);
}

Status queued_mrecv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, MPI_Message* message,
                    MPI_Status* status) {
  WatchedReceive operation;
  Status started = operation.start_queued(buffer, count, type, where, matched_queue().take_handed_out(*message));
  *message = MPI_MESSAGE_NULL;
  if (!started.is_ok()) {
    return started;
  }
  return run_to_completion(operation, status);
}

Status queued_imrecv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, MPI_Message* message,
                     MPI_Request* request) {
  auto operation = std::make_unique<WatchedReceive>();
  std::unique_ptr<QueuedMessage> queued = matched_queue().take_handed_out(*message);
  const MPI_Comm comm = queued != nullptr ? queued->comm : MPI_COMM_WORLD;
  Status started = operation->start_queued(buffer, count, type, where, std::move(queued));
  *message = MPI_MESSAGE_NULL;
  if (!started.is_ok()) {
    return started;
  }
  return track(std::move(operation), request, comm);
}

thread_local TypeSizeCache t_type_size __attribute__((tls_model("initial-exec"))) = {};

bool host_receive_needs_engine(int count, MPI_Datatype type) {
  if (has_queued_messages()) {
    return true;
  }
  long long size = 0;
  return type_size_of(type, &size) && count > 0 &&
         may_take_envelope(static_cast<std::size_t>(count) * static_cast<std::size_t>(size));
}

}  // namespace cumpi::protocol
