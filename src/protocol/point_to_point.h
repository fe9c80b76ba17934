// The engine's point-to-point entry points. Sends of device memory go eagerly
// (staged through pinned host copies, the message on the wire exactly what
// plain MPI sends for the same count and datatype) or, when large and
// contiguous, by rendezvous; receives are watched for envelopes.
#pragma once

#include "memory/device_memory.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

enum class SendMode { standard, synchronous, buffered, ready };

// Each buffer comes with `where` it lives, as memory::locate answered for
// this call (the wrapper asked once; nothing below asks again).

Status send(SendMode mode, const void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, int dest,
            int tag, MPI_Comm comm);
Status isend(SendMode mode, const void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, int dest,
             int tag, MPI_Comm comm, MPI_Request* request);
Status send_init(SendMode mode, const void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request);

Status recv(void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
            MPI_Comm comm, MPI_Status* status);
Status irecv(void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
             MPI_Comm comm, MPI_Request* request);
Status recv_init(void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
                 MPI_Comm comm, MPI_Request* request);
Status mrecv(void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, MPI_Message* message,
             MPI_Status* status);
Status imrecv(void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, MPI_Message* message,
              MPI_Request* request);

Status sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const memory::PointerInfo& send_where,
                int dest, int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                const memory::PointerInfo& recv_where, int source, int recvtag, MPI_Comm comm, MPI_Status* status);
// MPI_Sendrecv of host buffers as host_recv receives: the real call, or
// nonblocking halves and waits that serve the engine, then a look at what
// arrived.
Status host_sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);
Status sendrecv_replace(void* buf, int count, MPI_Datatype type, const memory::PointerInfo& where, int dest,
                        int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status);

}  // namespace cumpi::protocol
