// Point-to-point: host buffers to the real function, device buffers to the
// staged engine.
#include "memory/classifier.h"
#include "mpi_wrappers/intercept.h"
#include "protocol/staged_p2p.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::wrappers {

using memory::on_device;
using protocol::SendMode;

int intercept_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!on_device(buf)) {
    return real_mpi().Send(buf, count, type, dest, tag, comm);
  }
  return report(protocol::send(SendMode::standard, buf, count, type, dest, tag, comm), comm);
}

int intercept_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!on_device(buf)) {
    return real_mpi().Ssend(buf, count, type, dest, tag, comm);
  }
  return report(protocol::send(SendMode::synchronous, buf, count, type, dest, tag, comm), comm);
}

int intercept_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!on_device(buf)) {
    return real_mpi().Bsend(buf, count, type, dest, tag, comm);
  }
  return report(protocol::send(SendMode::buffered, buf, count, type, dest, tag, comm), comm);
}

int intercept_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!on_device(buf)) {
    return real_mpi().Rsend(buf, count, type, dest, tag, comm);
  }
  return report(protocol::send(SendMode::ready, buf, count, type, dest, tag, comm), comm);
}

int intercept_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Isend(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::isend(SendMode::standard, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Issend(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::isend(SendMode::synchronous, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Ibsend(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::isend(SendMode::buffered, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Irsend(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::isend(SendMode::ready, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Send_init(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::send_init(SendMode::standard, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Ssend_init(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::send_init(SendMode::synchronous, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Bsend_init(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::send_init(SendMode::buffered, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Rsend_init(buf, count, type, dest, tag, comm, request);
  }
  return report(protocol::send_init(SendMode::ready, buf, count, type, dest, tag, comm, request), comm);
}

int intercept_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Status* status) {
  if (!on_device(buf)) {
    return real_mpi().Recv(buf, count, type, source, tag, comm, status);
  }
  return report(protocol::recv(buf, count, type, source, tag, comm, status), comm);
}

int intercept_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Irecv(buf, count, type, source, tag, comm, request);
  }
  return report(protocol::irecv(buf, count, type, source, tag, comm, request), comm);
}

int intercept_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Recv_init(buf, count, type, source, tag, comm, request);
  }
  return report(protocol::recv_init(buf, count, type, source, tag, comm, request), comm);
}

int intercept_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       MPI_Status* status) {
  if (!on_device(sendbuf) && !on_device(recvbuf)) {
    return real_mpi().Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                               recvtag, comm, status);
  }
  return report(protocol::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                   source, recvtag, comm, status),
                comm);
}

int intercept_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                               int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!on_device(buf)) {
    return real_mpi().Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  }
  return report(protocol::sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status), comm);
}

// Probes see plain MPI messages: the staged path sends exactly those.
int intercept_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return real_mpi().Probe(source, tag, comm, status);
}

int intercept_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return real_mpi().Iprobe(source, tag, comm, flag, status);
}

int intercept_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return real_mpi().Mprobe(source, tag, comm, message, status);
}

int intercept_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return real_mpi().Improbe(source, tag, comm, flag, message, status);
}

int intercept_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (!on_device(buf)) {
    return real_mpi().Mrecv(buf, count, type, message, status);
  }
  return report(protocol::mrecv(buf, count, type, message, status), MPI_COMM_WORLD);
}

int intercept_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  if (!on_device(buf)) {
    return real_mpi().Imrecv(buf, count, type, message, request);
  }
  return report(protocol::imrecv(buf, count, type, message, request), MPI_COMM_WORLD);
}

}  // namespace cumpi::wrappers
