#include "protocol/point_to_point.h"

#include <memory>
#include <vector>

#include "memory/classifier.h"
#include "memory/staged_buffer.h"
#include "protocol/channel.h"
#include "protocol/comm_context.h"
#include "protocol/completion.h"
#include "protocol/envelope_grants.h"
#include "protocol/persistent.h"
#include "protocol/progress.h"
#include "protocol/rendezvous_send.h"
#include "protocol/short_envelope.h"
#include "protocol/watched_receive.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"
#include "runtime/status_bytes.h"

namespace cumpi::protocol {

using memory::ByteSpan;
using memory::PointerInfo;
using memory::StagedBuffer;
using memory::TypeLayout;

namespace {

using BlockingSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using NonblockingSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

// The real functions of one send mode.
struct SendFunctions {
  BlockingSend blocking;
  NonblockingSend nonblocking;
  NonblockingSend persistent;  // none for buffered sends: see buffered_send_init
};

SendFunctions send_functions(SendMode mode) {
  const RealMpi& mpi = real_mpi();
  switch (mode) {
    case SendMode::synchronous:
      return {mpi.Ssend, mpi.Issend, mpi.Ssend_init};
    case SendMode::buffered:
      return {mpi.Bsend, mpi.Ibsend, nullptr};
    case SendMode::ready:
      return {mpi.Rsend, mpi.Irsend, mpi.Rsend_init};
    case SendMode::standard:
      break;
  }
  return {mpi.Send, mpi.Isend, mpi.Send_init};
}

// The device bytes of `count` elements, copied to host for MPI to send.
Status stage_send(const void* buf, int count, MPI_Datatype type, const PointerInfo& where, StagedBuffer* staged) {
  TypeLayout layout;
  ByteSpan span;
  Status status = memory::span_of_call(type, count, &layout, &span);
  return status.is_ok() ? StagedBuffer::for_reading(buf, span, where, staged) : status;
}

// Host memory for MPI to receive `count` elements into. Unless the span is
// contiguous (the message's bytes in order, so that a message shorter than
// the receive fills exactly its first bytes), the device bytes are copied
// to host first and the whole span goes back: holes, and elements a short
// message does not reach, keep their values.
Status stage_receive(void* buf, int count, MPI_Datatype type, const PointerInfo& where, StagedBuffer* staged,
                     bool* contiguous) {
  TypeLayout layout;
  ByteSpan span;
  Status status = memory::span_of_call(type, count, &layout, &span);
  if (!status.is_ok()) {
    return status;
  }
  *contiguous = memory::is_contiguous(layout, count, span);
  return StagedBuffer::for_writing(buf, span, where, !*contiguous, staged);
}

// After a blocking receive into `staged` returned `rc`: copies the bytes that
// arrived back to the device (a truncated message still delivers what fit).
Status finish_receive(int rc, StagedBuffer& staged, bool contiguous, const MPI_Status& status) {
  if (rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE) {
    return from_mpi(rc);
  }
  Status copied;
  MPI_Count received = 0;
  if (!contiguous || real_mpi().Get_elements_x(&status, MPI_BYTE, &received) != MPI_SUCCESS ||
      received == MPI_UNDEFINED) {
    copied = staged.copy_back_all();
  } else {
    copied = staged.copy_back(static_cast<std::size_t>(received));
  }
  return rc != MPI_SUCCESS ? from_mpi(rc) : std::move(copied);
}

void log_eager_send(std::size_t bytes, int dest, int tag) {
  CUMPI_LOG(debug, "device message of %zu bytes to rank %d (tag %d): eager, through a host copy", bytes, dest, tag);
}

void log_staged_receive(std::size_t bytes) {
  CUMPI_LOG(debug, "device receive of up to %zu bytes: eager, through a host copy", bytes);
}

MPI_Status* status_or_local(MPI_Status* status, MPI_Status* local) {
  return status == MPI_STATUS_IGNORE ? local : status;
}

// A blocking receive of `count` elements into `buf` through staging:
// `receive(host_buffer, status)` is the real call, on a message matched
// already, so other threads may use the engine while it blocks.
template <typename Receive>
Status staged_receive(void* buf, int count, MPI_Datatype type, const PointerInfo& where, MPI_Status* status,
                      Receive receive) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  StagedBuffer staged;
  bool contiguous = true;
  Status staging = stage_receive(buf, count, type, where, &staged, &contiguous);
  if (!staging.is_ok()) {
    return staging;
  }
  record.add_bytes(staged.staged_bytes());
  log_staged_receive(staged.staged_bytes());
  MPI_Status local{};
  MPI_Status* result = status_or_local(status, &local);
  const int rc = runtime::with_engine_released([&] { return receive(staged.mpi_pointer(), result); });
  return finish_receive(rc, staged, contiguous, *result);
}

// The nonblocking form: `post(host_buffer, inner_request)` is the real call.
// `comm` hears of its errors.
template <typename Post>
Status staged_receive_nonblocking(void* buf, int count, MPI_Datatype type, const PointerInfo& where, MPI_Comm comm,
                                  MPI_Request* request, Post post) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  auto operation = std::make_unique<StagedOperation>();
  StagedBuffer staged;
  bool contiguous = true;
  Status staging = stage_receive(buf, count, type, where, &staged, &contiguous);
  if (!staging.is_ok()) {
    return staging;
  }
  record.add_bytes(staged.staged_bytes());
  log_staged_receive(staged.staged_bytes());
  operation->copy_back_received_only = contiguous;
  const int rc = post(staged.mpi_pointer(), &operation->inner);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->writes.push_back(std::move(staged));
  return track(std::move(operation), request, comm);
}

// A device message that goes by rendezvous: contiguous, inside its
// allocation, large enough, and not buffered (Bsend completes locally).
struct RendezvousMessage {
  const char* data = nullptr;
  std::size_t bytes = 0;
  memory::PointerInfo owner;
  int peer = -1;                                           // dest's world rank
  std::int64_t short_slot = RendezvousSend::kNoShortSlot;  // claimed for a message smaller than an envelope
};

bool rendezvous_message(SendMode mode, const void* buf, int count, MPI_Datatype type, const PointerInfo& owner,
                        int dest, MPI_Comm comm, RendezvousMessage* out) {
  if (mode == SendMode::buffered || dest == MPI_PROC_NULL) {
    return false;
  }
  TypeLayout layout;
  ByteSpan span;
  if (!memory::span_of_call(type, count, &layout, &span).is_ok() || !memory::is_contiguous(layout, count, span) ||
      !may_go_by_rendezvous(span.bytes)) {
    return false;
  }
  const char* data = static_cast<const char*>(buf) + span.offset;
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  if (owner.kind != memory::MemoryKind::device || first < owner.base || first + span.bytes > owner.base + owner.size) {
    return false;  // the staged path reports what is wrong with the buffer
  }
  const int peer = world_rank_of(comm, dest);
  if (peer < 0 || !goes_by_rendezvous(span.bytes, peer)) {
    return false;
  }
  std::int64_t short_slot = RendezvousSend::kNoShortSlot;
  if (span.bytes < kEnvelopeBytes) {
    std::uint32_t slot = 0;
    if (!claim_short_slot(peer, &slot)) {
      return false;  // every slot towards the peer is in flight
    }
    short_slot = slot;
  }
  *out = RendezvousMessage{data, span.bytes, owner, peer, short_slot};
  return true;
}

Status rendezvous_send(const RendezvousMessage& message, int dest, int tag, MPI_Comm comm) {
  RendezvousSend send;
  Status status =
      send.start(message.data, message.bytes, message.owner, dest, message.peer, tag, comm, message.short_slot);
  if (!status.is_ok()) {
    return status;
  }
  Status error;
  while (!send.advance(&error)) {
    progress_if_pending();
    runtime::yield_engine();
  }
  return error;
}

Status rendezvous_isend(const RendezvousMessage& message, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  auto operation = std::make_unique<RendezvousSendOperation>();
  Status status = operation->send.start(message.data, message.bytes, message.owner, dest, message.peer, tag, comm,
                                        message.short_slot);
  if (!status.is_ok()) {
    return status;
  }
  return track(std::move(operation), request, comm);
}

// A persistent buffered send keeps its message's description: its request
// is made anew at each start (see PersistentOperation::buffered).
int buffered_send_init(PersistentOperation& operation, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request* request) {
  auto message = std::make_unique<PersistentOperation::BufferedMessage>();
  int rc = real_mpi().Type_dup(type, &message->type);
  if (rc != MPI_SUCCESS) {
    return rc;
  }
  message->count = count;
  message->dest = dest;
  message->tag = tag;
  message->comm = comm;
  operation.buffered = std::move(message);
  return make_buffered_request(operation, request);
}

}  // namespace

Status send(SendMode mode, const void* buf, int count, MPI_Datatype type, const PointerInfo& where, int dest, int tag,
            MPI_Comm comm) {
  RendezvousMessage message;
  if (rendezvous_message(mode, buf, count, type, where, dest, comm, &message)) {
    return rendezvous_send(message, dest, tag, comm);
  }
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  StagedBuffer staged;
  Status status = stage_send(buf, count, type, where, &staged);
  if (!status.is_ok()) {
    return status;
  }
  record.add_bytes(staged.staged_bytes());
  log_eager_send(staged.staged_bytes(), dest, tag);
  return from_mpi(runtime::with_engine_released(
      [&] { return send_functions(mode).blocking(staged.mpi_pointer(), count, type, dest, tag, comm); }));
}

Status isend(SendMode mode, const void* buf, int count, MPI_Datatype type, const PointerInfo& where, int dest, int tag,
             MPI_Comm comm, MPI_Request* request) {
  RendezvousMessage message;
  if (rendezvous_message(mode, buf, count, type, where, dest, comm, &message)) {
    return rendezvous_isend(message, dest, tag, comm, request);
  }
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  auto operation = std::make_unique<StagedOperation>();
  StagedBuffer staged;
  Status status = stage_send(buf, count, type, where, &staged);
  if (!status.is_ok()) {
    return status;
  }
  record.add_bytes(staged.staged_bytes());
  log_eager_send(staged.staged_bytes(), dest, tag);
  const int rc =
      send_functions(mode).nonblocking(staged.mpi_pointer(), count, type, dest, tag, comm, &operation->inner);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->reads.push_back(std::move(staged));
  return track(std::move(operation), request, comm);
}

Status send_init(SendMode mode, const void* buf, int count, MPI_Datatype type, const PointerInfo& where, int dest,
                 int tag, MPI_Comm comm, MPI_Request* request) {
  auto operation = std::make_unique<PersistentOperation>();
  operation->comm = comm;
  Status status = stage_send(buf, count, type, where, &operation->staged);
  if (!status.is_ok()) {
    return status;
  }
  const int rc = mode == SendMode::buffered ? buffered_send_init(*operation, count, type, dest, tag, comm, request)
                                            : send_functions(mode).persistent(operation->staged.mpi_pointer(), count,
                                                                              type, dest, tag, comm, request);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->request = *request;
  add_persistent(std::move(operation));
  return Status::ok();
}

Status recv(void* buf, int count, MPI_Datatype type, const PointerInfo& where, int source, int tag, MPI_Comm comm,
            MPI_Status* status) {
  return watched_recv(buf, count, type, where, source, tag, comm, status);
}

Status irecv(void* buf, int count, MPI_Datatype type, const PointerInfo& where, int source, int tag, MPI_Comm comm,
             MPI_Request* request) {
  return watched_irecv(buf, count, type, where, source, tag, comm, request);
}

// Messages matched by MPI_Mprobe itself are never envelopes: probes take
// every message of the envelope's size into the matched queue.
Status mrecv(void* buf, int count, MPI_Datatype type, const PointerInfo& where, MPI_Message* message,
             MPI_Status* status) {
  if (has_queued_messages() && matched_queue().is_handed_out(*message)) {
    return queued_mrecv(buf, count, type, where, message, status);
  }
  return staged_receive(buf, count, type, where, status, [&](void* host, MPI_Status* result) {
    return real_mpi().Mrecv(host, count, type, message, result);
  });
}

Status imrecv(void* buf, int count, MPI_Datatype type, const PointerInfo& where, MPI_Message* message,
              MPI_Request* request) {
  if (has_queued_messages() && matched_queue().is_handed_out(*message)) {
    return queued_imrecv(buf, count, type, where, message, request);
  }
  // The communicator of a matched message is not known here.
  return staged_receive_nonblocking(
      buf, count, type, where, MPI_COMM_WORLD, request,
      [&](void* host, MPI_Request* inner) { return real_mpi().Imrecv(host, count, type, message, inner); });
}

Status recv_init(void* buf, int count, MPI_Datatype type, const PointerInfo& where, int source, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  auto operation = std::make_unique<PersistentOperation>();
  operation->is_receive = true;
  operation->comm = comm;
  Status status = ReceiveTarget::prepare(buf, count, type, where, false, &operation->target);
  if (!status.is_ok()) {
    return status;
  }
  ReceiveTarget& target = operation->target;
  target.land_stand_ins_whole();
  const int rc =
      real_mpi().Recv_init(target.post_buffer(), target.post_count(), target.post_type(), source, tag, comm, request);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->request = *request;
  add_persistent(std::move(operation));
  return Status::ok();
}

namespace {

// The send half of an exchange, nonblocking, from host or device memory.
Status post_send_half(const void* buf, int count, MPI_Datatype type, const PointerInfo& where, int dest, int tag,
                      MPI_Comm comm, MPI_Request* request) {
  if (memory::is_device(where)) {
    return isend(SendMode::standard, buf, count, type, where, dest, tag, comm, request);
  }
  return from_mpi(real_mpi().Isend(buf, count, type, dest, tag, comm, request));
}

// The receive half runs while the send half is in flight (either may need
// the other side's receive half to progress), then the send half completes.
Status exchange(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const PointerInfo& send_where, int dest,
                int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, const PointerInfo& recv_where,
                int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  MPI_Request send_request = MPI_REQUEST_NULL;
  Status sent = post_send_half(sendbuf, sendcount, sendtype, send_where, dest, sendtag, comm, &send_request);
  if (!sent.is_ok()) {
    return sent;
  }
  Status received = watched_recv(recvbuf, recvcount, recvtype, recv_where, source, recvtag, comm, status);
  sent = wait(&send_request, MPI_STATUS_IGNORE);
  return received.is_ok() ? std::move(sent) : std::move(received);
}

}  // namespace

Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const PointerInfo& send_where, int dest,
                int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, const PointerInfo& recv_where,
                int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return exchange(sendbuf, sendcount, sendtype, send_where, dest, sendtag, recvbuf, recvcount, recvtype, recv_where,
                  source, recvtag, comm, status);
}

Status host_sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  serve_grants();
  if (has_queued_messages() || must_land_privately(recvbuf, recvcount, recvtype)) {
    return exchange(sendbuf, sendcount, sendtype, memory::kHostMemory, dest, sendtag, recvbuf, recvcount, recvtype,
                    memory::kHostMemory, source, recvtag, comm, status);
  }
  MPI_Status local{};
  MPI_Status* result = status == MPI_STATUS_IGNORE ? &local : status;
  const RealMpi& mpi = real_mpi();
  if (may_block_in_mpi()) {
    const int rc = mpi.Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                recvtag, comm, result);
    if (rc != MPI_SUCCESS) {
      return from_mpi(rc);
    }
  } else {
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    Status exchanged = from_mpi(mpi.Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0]));
    if (exchanged.is_ok()) {
      exchanged = from_mpi(mpi.Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[1]));
    }
    if (exchanged.is_ok()) exchanged = wait_serving(&requests[0], result);
    if (exchanged.is_ok()) exchanged = wait_serving(&requests[1], MPI_STATUS_IGNORE);
    if (!exchanged.is_ok()) {
      return exchanged;
    }
  }
  return look_at_host_receive(recvbuf, recvcount, recvtype, comm, status_bytes(*result), result);
}

Status sendrecv_replace(void* buf, int count, MPI_Datatype type, const PointerInfo& where, int dest, int sendtag,
                        int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  TypeLayout layout;
  ByteSpan span;
  Status staging = memory::span_of_call(type, count, &layout, &span);
  if (!staging.is_ok()) {
    return staging;
  }
  // The outgoing data is copied first: the incoming message overwrites the buffer.
  StagedBuffer device_copy;
  std::vector<char> host_copy;
  const void* outgoing = nullptr;
  if (memory::is_device(where)) {
    staging = StagedBuffer::for_reading(buf, span, where, &device_copy);
    if (!staging.is_ok()) {
      return staging;
    }
    outgoing = device_copy.mpi_pointer();
  } else {
    const char* first = static_cast<const char*>(buf) + span.offset;
    host_copy.assign(first, first + span.bytes);
    outgoing = host_copy.data() - span.offset;
  }
  // The outgoing copy is host memory.
  return exchange(outgoing, count, type, memory::kHostMemory, dest, sendtag, buf, count, type, where, source, recvtag,
                  comm, status);
}

}  // namespace cumpi::protocol
