// Point-to-point: host buffers to the real function, device buffers to the
// engine. Host receives that could take an envelope, probes, and blocking
// host sends while device operations need service go to the engine too.
#include "memory/classifier.h"
#include "memory/datatype_layout.h"
#include "mpi_wrappers/intercept.h"
#include "mpi_wrappers/large_count_types.h"
#include "protocol/completion.h"
#include "protocol/host_receives.h"
#include "protocol/matched_queue.h"
#include "protocol/operation_table.h"
#include "protocol/point_to_point.h"
#include "protocol/progress.h"
#include "protocol/type_size_cache.h"
#include "protocol/watched_receive.h"

namespace cumpi::wrappers {

using memory::is_device;
using memory::locate;
using protocol::SendMode;

namespace {

// A blocking host send while device operations are outstanding: the wait
// serves them (a peer may be pulling from this rank meanwhile).
using HostIsend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
int host_send_serving(HostIsend isend, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm) {
  return in_engine(comm, [=] {
    MPI_Request request = MPI_REQUEST_NULL;
    const int rc = isend(buf, count, type, dest, tag, comm, &request);
    return rc == MPI_SUCCESS ? protocol::wait_serving(&request, MPI_STATUS_IGNORE) : Status::mpi(rc);
  });
}

bool host_send_needs_engine() { return protocol::needs_service(); }

// A blocking host receive goes through the engine when it may take an
// envelope, or when device operations need service while it blocks.
bool blocking_host_receive_needs_engine(int count, MPI_Datatype type) {
  return protocol::host_receive_needs_engine(count, type) || protocol::needs_service();
}

}  // namespace

int intercept_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return host_send_needs_engine() ? host_send_serving(real().Isend, buf, count, type, dest, tag, comm)
                                    : real().Send(buf, count, type, dest, tag, comm);
  }
  return in_engine(comm, [=] { return protocol::send(SendMode::standard, buf, count, type, where, dest, tag, comm); });
}

int intercept_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return host_send_needs_engine() ? host_send_serving(real().Issend, buf, count, type, dest, tag, comm)
                                    : real().Ssend(buf, count, type, dest, tag, comm);
  }
  return in_engine(comm,
                   [=] { return protocol::send(SendMode::synchronous, buf, count, type, where, dest, tag, comm); });
}

int intercept_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Bsend(buf, count, type, dest, tag, comm);
  }
  return in_engine(comm, [=] { return protocol::send(SendMode::buffered, buf, count, type, where, dest, tag, comm); });
}

int intercept_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return host_send_needs_engine() ? host_send_serving(real().Irsend, buf, count, type, dest, tag, comm)
                                    : real().Rsend(buf, count, type, dest, tag, comm);
  }
  return in_engine(comm, [=] { return protocol::send(SendMode::ready, buf, count, type, where, dest, tag, comm); });
}

int intercept_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Isend(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(
      comm, [=] { return protocol::isend(SendMode::standard, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Issend(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(
      comm, [=] { return protocol::isend(SendMode::synchronous, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Ibsend(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(
      comm, [=] { return protocol::isend(SendMode::buffered, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Irsend(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(comm,
                   [=] { return protocol::isend(SendMode::ready, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Send_init(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(
      comm, [=] { return protocol::send_init(SendMode::standard, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Ssend_init(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(comm, [=] {
    return protocol::send_init(SendMode::synchronous, buf, count, type, where, dest, tag, comm, request);
  });
}

int intercept_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Bsend_init(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(
      comm, [=] { return protocol::send_init(SendMode::buffered, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where)) {
    return real().Rsend_init(buf, count, type, dest, tag, comm, request);
  }
  return in_engine(
      comm, [=] { return protocol::send_init(SendMode::ready, buf, count, type, where, dest, tag, comm, request); });
}

int intercept_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (is_device(where)) {
    return in_engine(comm, [=] { return protocol::recv(buf, count, type, where, source, tag, comm, status); });
  }
  if (!blocking_host_receive_needs_engine(count, type)) {
    return real().Recv(buf, count, type, source, tag, comm, status);
  }
  return in_engine(comm, [=] { return protocol::host_recv(buf, count, type, source, tag, comm, status); });
}

int intercept_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (is_device(where)) {
    return in_engine(comm, [=] { return protocol::irecv(buf, count, type, where, source, tag, comm, request); });
  }
  if (!protocol::host_receive_needs_engine(count, type)) {
    return real().Irecv(buf, count, type, source, tag, comm, request);
  }
  if (protocol::direct_receive_needs_no_engine()) {
    return protocol::post_direct_receive_now(buf, count, type, source, tag, comm, request);
  }
  return in_engine(comm, [=] { return protocol::host_irecv(buf, count, type, source, tag, comm, request); });
}

int intercept_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where) && !protocol::host_receive_needs_engine(count, type)) {
    return real().Recv_init(buf, count, type, source, tag, comm, request);
  }
  return in_engine(comm, [=] { return protocol::recv_init(buf, count, type, where, source, tag, comm, request); });
}

int intercept_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       MPI_Status* status) {
  const memory::PointerInfo send_where = locate(sendbuf, sendcount, sendtype);
  const memory::PointerInfo recv_where = locate(recvbuf, recvcount, recvtype);
  const bool host = !is_device(send_where) && !is_device(recv_where);
  if (host && !blocking_host_receive_needs_engine(recvcount, recvtype)) {
    return real().Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status);
  }
  if (host) {
    return in_engine(comm, [=] {
      return protocol::host_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                     recvtag, comm, status);
    });
  }
  return in_engine(comm, [=] {
    return protocol::sendrecv(sendbuf, sendcount, sendtype, send_where, dest, sendtag, recvbuf, recvcount, recvtype,
                              recv_where, source, recvtag, comm, status);
  });
}

int intercept_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                               MPI_Comm comm, MPI_Status* status) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where) && !blocking_host_receive_needs_engine(count, type)) {
    return real().Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  }
  return in_engine(comm, [=] {
    return protocol::sendrecv_replace(buf, count, type, where, dest, sendtag, source, recvtag, comm, status);
  });
}

// Probes report the real size of rendezvous messages (DESIGN §3).
int intercept_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return in_engine(comm, [=] { return protocol::probe(source, tag, comm, nullptr, status); });
}

int intercept_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return in_engine(comm, [=] { return protocol::probe(source, tag, comm, flag, status); });
}

int intercept_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return in_engine(comm, [=] { return protocol::mprobe(source, tag, comm, nullptr, message, status); });
}

int intercept_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return in_engine(comm, [=] { return protocol::mprobe(source, tag, comm, flag, message, status); });
}

namespace {

// Handles of messages cumpi took out of MPI go to the engine whatever the
// buffer; other handles never carry envelopes.
bool handed_out(const MPI_Message* message) {
  return protocol::has_queued_messages() && protocol::matched_queue().is_handed_out(*message);
}

// Whose handler hears of cumpi's errors in receiving a matched message: the
// communicator of a message cumpi handed out. MPI does not say which
// communicator one of its own message handles belongs to; only MPI's own
// errors can come of those (it reports them itself), or failed device
// copies, which go to MPI_COMM_WORLD's handler.
MPI_Comm comm_of_message(const MPI_Message* message) {
  const MPI_Comm comm =
      protocol::has_queued_messages() ? protocol::matched_queue().comm_of_handed_out(*message) : MPI_COMM_NULL;
  return comm != MPI_COMM_NULL ? comm : MPI_COMM_WORLD;
}

}  // namespace

int intercept_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where) && !handed_out(message)) {
    return real().Mrecv(buf, count, type, message, status);
  }
  return in_engine(comm_of_message(message), [=] { return protocol::mrecv(buf, count, type, where, message, status); });
}

int intercept_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  const memory::PointerInfo where = locate(buf, count, type);
  if (!is_device(where) && !handed_out(message)) {
    return real().Imrecv(buf, count, type, message, request);
  }
  return in_engine(comm_of_message(message),
                   [=] { return protocol::imrecv(buf, count, type, where, message, request); });
}

int intercept_Type_free(MPI_Datatype* type) {
  const MPI_Datatype freed = *type;
  const int rc = real().Type_free(type);
  forget_large_count_types_of(freed);
  protocol::forget_type_sizes();
  memory::forget_datatypes();
  return rc;
}

}  // namespace cumpi::wrappers
