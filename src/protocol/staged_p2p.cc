#include "protocol/staged_p2p.h"

#include <memory>

#include "memory/staged_buffer.h"
#include "protocol/persistent.h"
#include "protocol/progress.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"

namespace cumpi::protocol {

using memory::ByteSpan;
using memory::StagedBuffer;
using memory::TypeLayout;

namespace {

using BlockingSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using NonblockingSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

// The real functions of one send mode.
struct SendFunctions {
  BlockingSend blocking;
  NonblockingSend nonblocking;
  NonblockingSend persistent;
};

SendFunctions send_functions(SendMode mode) {
  const RealMpi& mpi = real_mpi();
  switch (mode) {
    case SendMode::synchronous: return {mpi.Ssend, mpi.Issend, mpi.Ssend_init};
    case SendMode::buffered: return {mpi.Bsend, mpi.Ibsend, mpi.Bsend_init};
    case SendMode::ready: return {mpi.Rsend, mpi.Irsend, mpi.Rsend_init};
    case SendMode::standard: break;
  }
  return {mpi.Send, mpi.Isend, mpi.Send_init};
}

// The device bytes of `count` elements, copied to host for MPI to send.
Status stage_send(const void* buf, int count, MPI_Datatype type, StagedBuffer* staged) {
  TypeLayout layout;
  ByteSpan span;
  Status status = memory::span_of_call(type, count, &layout, &span);
  return status.is_ok() ? StagedBuffer::for_reading(buf, span, staged) : status;
}

// Host memory for MPI to receive `count` elements into. Holes in the span
// are preserved by copying the device bytes first; `dense` says there are none.
Status stage_receive(void* buf, int count, MPI_Datatype type, StagedBuffer* staged, bool* dense) {
  TypeLayout layout;
  ByteSpan span;
  Status status = memory::span_of_call(type, count, &layout, &span);
  if (!status.is_ok()) {
    return status;
  }
  *dense = memory::is_dense(layout, count, span);
  return StagedBuffer::for_writing(buf, span, !*dense, staged);
}

// After a blocking receive into `staged` returned `rc`: copies the bytes that
// arrived back to the device (a truncated message still delivers what fit).
Status finish_receive(int rc, StagedBuffer& staged, bool dense, const MPI_Status& status) {
  if (rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE) {
    return from_mpi(rc);
  }
  Status copied;
  MPI_Count received = 0;
  if (!dense || real_mpi().Get_elements_x(&status, MPI_BYTE, &received) != MPI_SUCCESS ||
      received == MPI_UNDEFINED) {
    copied = staged.copy_back_all();
  } else {
    copied = staged.copy_back(static_cast<std::size_t>(received));
  }
  return rc != MPI_SUCCESS ? from_mpi(rc) : std::move(copied);
}

MPI_Status* status_or_local(MPI_Status* status, MPI_Status* local) {
  return status == MPI_STATUS_IGNORE ? local : status;
}

// A blocking receive of `count` elements into `buf` through staging:
// `receive(host_buffer, status)` is the real call.
template <typename Receive>
Status staged_receive(void* buf, int count, MPI_Datatype type, MPI_Status* status, Receive receive) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  StagedBuffer staged;
  bool dense = true;
  Status staging = stage_receive(buf, count, type, &staged, &dense);
  if (!staging.is_ok()) {
    return staging;
  }
  record.add_bytes(staged.staged_bytes());
  MPI_Status local{};
  MPI_Status* result = status_or_local(status, &local);
  const int rc = receive(staged.mpi_pointer(), result);
  return finish_receive(rc, staged, dense, *result);
}

// The nonblocking form: `post(host_buffer, inner_request)` is the real call.
template <typename Post>
Status staged_receive_nonblocking(void* buf, int count, MPI_Datatype type, MPI_Request* request, Post post) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  auto operation = std::make_unique<PendingOperation>();
  StagedBuffer staged;
  bool dense = true;
  Status staging = stage_receive(buf, count, type, &staged, &dense);
  if (!staging.is_ok()) {
    return staging;
  }
  record.add_bytes(staged.staged_bytes());
  operation->copy_back_received_only = dense;
  const int rc = post(staged.mpi_pointer(), &operation->inner);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->writes.push_back(std::move(staged));
  return track(std::move(operation), request);
}

}  // namespace

Status send(SendMode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  StagedBuffer staged;
  Status status = stage_send(buf, count, type, &staged);
  if (!status.is_ok()) {
    return status;
  }
  record.add_bytes(staged.staged_bytes());
  return from_mpi(send_functions(mode).blocking(staged.mpi_pointer(), count, type, dest, tag, comm));
}

Status isend(SendMode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
             MPI_Request* request) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  auto operation = std::make_unique<PendingOperation>();
  StagedBuffer staged;
  Status status = stage_send(buf, count, type, &staged);
  if (!status.is_ok()) {
    return status;
  }
  record.add_bytes(staged.staged_bytes());
  const int rc =
      send_functions(mode).nonblocking(staged.mpi_pointer(), count, type, dest, tag, comm, &operation->inner);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->reads.push_back(std::move(staged));
  return track(std::move(operation), request);
}

Status send_init(SendMode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  auto operation = std::make_unique<PersistentOperation>();
  Status status = stage_send(buf, count, type, &operation->staged);
  if (!status.is_ok()) {
    return status;
  }
  const int rc =
      send_functions(mode).persistent(operation->staged.mpi_pointer(), count, type, dest, tag, comm, request);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->request = *request;
  add_persistent(std::move(operation));
  return Status::ok();
}

Status recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return staged_receive(buf, count, type, status, [&](void* host, MPI_Status* result) {
    return real_mpi().Recv(host, count, type, source, tag, comm, result);
  });
}

Status mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  return staged_receive(buf, count, type, status, [&](void* host, MPI_Status* result) {
    return real_mpi().Mrecv(host, count, type, message, result);
  });
}

Status irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return staged_receive_nonblocking(buf, count, type, request, [&](void* host, MPI_Request* inner) {
    return real_mpi().Irecv(host, count, type, source, tag, comm, inner);
  });
}

Status imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  return staged_receive_nonblocking(buf, count, type, request, [&](void* host, MPI_Request* inner) {
    return real_mpi().Imrecv(host, count, type, message, inner);
  });
}

Status recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  auto operation = std::make_unique<PersistentOperation>();
  operation->is_receive = true;
  Status staging = stage_receive(buf, count, type, &operation->staged, &operation->dense);
  if (!staging.is_ok()) {
    return staging;
  }
  const int rc = real_mpi().Recv_init(operation->staged.mpi_pointer(), count, type, source, tag, comm, request);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  operation->request = *request;
  add_persistent(std::move(operation));
  return Status::ok();
}

Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  StagedBuffer outgoing;
  Status staging = stage_send(sendbuf, sendcount, sendtype, &outgoing);
  if (!staging.is_ok()) {
    return staging;
  }
  StagedBuffer incoming;
  bool dense = true;
  staging = stage_receive(recvbuf, recvcount, recvtype, &incoming, &dense);
  if (!staging.is_ok()) {
    return staging;
  }
  record.add_bytes(outgoing.staged_bytes() + incoming.staged_bytes());
  MPI_Status local{};
  MPI_Status* result = status_or_local(status, &local);
  const int rc = real_mpi().Sendrecv(outgoing.mpi_pointer(), sendcount, sendtype, dest, sendtag,
                                     incoming.mpi_pointer(), recvcount, recvtype, source, recvtag, comm, result);
  return finish_receive(rc, incoming, dense, *result);
}

Status sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                        MPI_Comm comm, MPI_Status* status) {
  stats::ScopedRecord record(stats::Route::staged_p2p, 0);
  TypeLayout layout;
  ByteSpan span;
  Status staging = memory::span_of_call(type, count, &layout, &span);
  if (!staging.is_ok()) {
    return staging;
  }
  // The host copy holds the outgoing data; what does not get overwritten by
  // the incoming message goes back to the device unchanged.
  StagedBuffer staged;
  staging = StagedBuffer::for_writing(buf, span, true, &staged);
  if (!staging.is_ok()) {
    return staging;
  }
  record.add_bytes(staged.staged_bytes());
  MPI_Status local{};
  MPI_Status* result = status_or_local(status, &local);
  const int rc = real_mpi().Sendrecv_replace(staged.mpi_pointer(), count, type, dest, sendtag, source, recvtag,
                                             comm, result);
  return finish_receive(rc, staged, false, *result);
}

}  // namespace cumpi::protocol
