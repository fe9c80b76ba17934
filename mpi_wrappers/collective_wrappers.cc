// Collectives: host buffers to the real function, device buffers (either
// side, on any rank independently) to the staged engine.
#include "coll/staged_collectives.h"
#include "memory/classifier.h"
#include "mpi_wrappers/intercept.h"

namespace cumpi::wrappers {

namespace {
bool any_on_device(const void* sendbuf, const void* recvbuf) {
  return memory::on_device(sendbuf) || memory::on_device(recvbuf);
}
}  // namespace

int intercept_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Allreduce(sendbuf, recvbuf, count, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::allreduce(sendbuf, recvbuf, count, type, op, comm, nullptr); });
}

int intercept_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  }
  return in_engine(comm, [=] { return coll::allreduce(sendbuf, recvbuf, count, type, op, comm, request); });
}

int intercept_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                     MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  }
  return in_engine(comm, [=] { return coll::reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr); });
}

int intercept_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  }
  return in_engine(comm, [=] { return coll::reduce(sendbuf, recvbuf, count, type, op, root, comm, request); });
}

int intercept_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!memory::on_device(buf)) {
    return real().Bcast(buf, count, type, root, comm);
  }
  return in_engine(comm, [=] { return coll::bcast(buf, count, type, root, comm, nullptr); });
}

int intercept_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  if (!memory::on_device(buf)) {
    return real().Ibcast(buf, count, type, root, comm, request);
  }
  return in_engine(comm, [=] { return coll::bcast(buf, count, type, root, comm, request); });
}

int intercept_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
}

int intercept_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

int intercept_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
}

int intercept_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

int intercept_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  });
}

int intercept_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                comm);
  }
  return in_engine(comm, [=] {
    return coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}

int intercept_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int intercept_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  });
}

int intercept_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int intercept_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int intercept_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm); });
}

int intercept_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); });
}

int intercept_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Scan(sendbuf, recvbuf, count, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::scan(sendbuf, recvbuf, count, type, op, comm); });
}

int intercept_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Exscan(sendbuf, recvbuf, count, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::exscan(sendbuf, recvbuf, count, type, op, comm); });
}

}  // namespace cumpi::wrappers
