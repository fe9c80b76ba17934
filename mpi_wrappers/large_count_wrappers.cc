// MPI-4's large-count calls (MPI_Send_c and the rest of the list): each is
// its int-count form, with the count as large_count_types.h makes it.
// Reductions cannot take a derived type: a blocking one past INT_MAX
// elements goes in pieces of 2^30 elements, each a reduction of its own (the
// same result, element by element); a nonblocking one that large on device
// memory is refused with MPI_ERR_COUNT.
#include "mpi_wrappers/large_count_types.h"

#if MPI_VERSION >= 4

#include <algorithm>

#include "mpi_wrappers/intercept.h"

namespace cumpi::wrappers {

namespace {

constexpr MPI_Count kReductionPiece = MPI_Count{1} << 30;

// `buffer` moved on by `bytes`; MPI_IN_PLACE and NULL (a non-root's receive
// buffer) stay as they are.
template <typename Pointer>
Pointer moved_on(Pointer buffer, MPI_Count bytes) {
  if (buffer == MPI_IN_PLACE || buffer == nullptr) {
    return buffer;
  }
  using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
  return static_cast<Pointer>(static_cast<Byte*>(buffer) + bytes);
}

// Runs reduce(byte offset, elements) over `count` elements (past INT_MAX)
// in pieces that fit an int; stops at the first error.
template <typename Reduce>
int in_pieces(MPI_Count count, MPI_Datatype type, Reduce reduce) {
  MPI_Count lb = 0;
  MPI_Count extent = 0;
  int rc = real().Type_get_extent_x(type, &lb, &extent);
  for (MPI_Count done = 0; rc == MPI_SUCCESS && done < count; done += kReductionPiece) {
    rc = reduce(done * extent, static_cast<int>(std::min(kReductionPiece, count - done)));
  }
  return rc;
}

bool on_device_memory(const void* buffer) { return buffer != MPI_IN_PLACE && memory::on_device(buffer); }

}  // namespace

int intercept_Send_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Send(buf, c.count(), c.type(), dest, tag, comm) : c.error();
}

int intercept_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Ssend(buf, c.count(), c.type(), dest, tag, comm) : c.error();
}

int intercept_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Bsend(buf, c.count(), c.type(), dest, tag, comm) : c.error();
}

int intercept_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Rsend(buf, c.count(), c.type(), dest, tag, comm) : c.error();
}

int intercept_Isend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Isend(buf, c.count(), c.type(), dest, tag, comm, request) : c.error();
}

int intercept_Issend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Issend(buf, c.count(), c.type(), dest, tag, comm, request) : c.error();
}

int intercept_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Ibsend(buf, c.count(), c.type(), dest, tag, comm, request) : c.error();
}

int intercept_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                       MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Irsend(buf, c.count(), c.type(), dest, tag, comm, request) : c.error();
}

int intercept_Recv_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                     MPI_Status* status) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Recv(buf, c.count(), c.type(), source, tag, comm, status) : c.error();
}

int intercept_Irecv_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                      MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Irecv(buf, c.count(), c.type(), source, tag, comm, request) : c.error();
}

int intercept_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                         void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  const CallCount out(sendcount, sendtype);
  const CallCount in(recvcount, recvtype);
  if (!out.ok() || !in.ok()) {
    return out.ok() ? in.error() : out.error();
  }
  return intercept_Sendrecv(sendbuf, out.count(), out.type(), dest, sendtag, recvbuf, in.count(), in.type(), source,
                            recvtag, comm, status);
}

int intercept_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag, int source,
                                 int recvtag, MPI_Comm comm, MPI_Status* status) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Sendrecv_replace(buf, c.count(), c.type(), dest, sendtag, source, recvtag, comm, status)
                : c.error();
}

int intercept_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Send_init(buf, c.count(), c.type(), dest, tag, comm, request) : c.error();
}

int intercept_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Recv_init(buf, c.count(), c.type(), source, tag, comm, request) : c.error();
}

int intercept_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Mrecv(buf, c.count(), c.type(), message, status) : c.error();
}

int intercept_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Imrecv(buf, c.count(), c.type(), message, request) : c.error();
}

int intercept_Bcast_c(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  const CallCount c(count, type);
  return c.ok() ? intercept_Bcast(buf, c.count(), c.type(), root, comm) : c.error();
}

int intercept_Ibcast_c(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                       MPI_Request* request) {
  const RequestCount c(count, type);
  return c.ok() ? intercept_Ibcast(buf, c.count(), c.type(), root, comm, request) : c.error();
}

int intercept_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  // With MPI_IN_PLACE the send count and type are not the caller's to give.
  const CallCount out(sendbuf == MPI_IN_PLACE ? 0 : sendcount, sendtype);
  const CallCount in(recvcount, recvtype);
  if (!out.ok() || !in.ok()) {
    return out.ok() ? in.error() : out.error();
  }
  return intercept_Allgather(sendbuf, out.count(), out.type(), recvbuf, in.count(), in.type(), comm);
}

int intercept_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const CallCount out(sendbuf == MPI_IN_PLACE ? 0 : sendcount, sendtype);
  const CallCount in(recvcount, recvtype);
  if (!out.ok() || !in.ok()) {
    return out.ok() ? in.error() : out.error();
  }
  return intercept_Alltoall(sendbuf, out.count(), out.type(), recvbuf, in.count(), in.type(), comm);
}

int intercept_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm) {
  if (fits_int(count)) {
    return intercept_Allreduce(sendbuf, recvbuf, as_int(count), type, op, comm);
  }
  return in_pieces(count, type, [=](MPI_Count offset, int elements) {
    return intercept_Allreduce(moved_on(sendbuf, offset), moved_on(recvbuf, offset), elements, type, op, comm);
  });
}

int intercept_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm) {
  if (fits_int(count)) {
    return intercept_Reduce(sendbuf, recvbuf, as_int(count), type, op, root, comm);
  }
  return in_pieces(count, type, [=](MPI_Count offset, int elements) {
    return intercept_Reduce(moved_on(sendbuf, offset), moved_on(recvbuf, offset), elements, type, op, root, comm);
  });
}

int intercept_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm, MPI_Request* request) {
  if (fits_int(count)) {
    return intercept_Iallreduce(sendbuf, recvbuf, as_int(count), type, op, comm, request);
  }
  if (!on_device_memory(sendbuf) && !on_device_memory(recvbuf)) {
    return real().Iallreduce_c(sendbuf, recvbuf, count, type, op, comm, request);
  }
  return report(Status::error(StatusCode::bad_count,
                              "a nonblocking reduction of more than INT_MAX elements in device memory is not "
                              "supported; MPI_Allreduce_c (blocking) is"),
                comm, "MPI_Iallreduce_c");
}

}  // namespace cumpi::wrappers

#endif
