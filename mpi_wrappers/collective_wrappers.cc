// Collectives: host buffers to the real function, device buffers (either
// side, on any rank independently) to the staged engine.
#include "coll/staged_collectives.h"
#include "memory/classifier.h"
#include "mpi_wrappers/intercept.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::wrappers {

namespace {
bool any_on_device(const void* sendbuf, const void* recvbuf) {
  return memory::on_device(sendbuf) || memory::on_device(recvbuf);
}
}  // namespace

int intercept_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Allreduce(sendbuf, recvbuf, count, type, op, comm);
  }
  return report(coll::allreduce(sendbuf, recvbuf, count, type, op, comm, nullptr), comm);
}

int intercept_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  }
  return report(coll::allreduce(sendbuf, recvbuf, count, type, op, comm, request), comm);
}

int intercept_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                     MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  }
  return report(coll::reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr), comm);
}

int intercept_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  }
  return report(coll::reduce(sendbuf, recvbuf, count, type, op, root, comm, request), comm);
}

int intercept_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!memory::on_device(buf)) {
    return real_mpi().Bcast(buf, count, type, root, comm);
  }
  return report(coll::bcast(buf, count, type, root, comm, nullptr), comm);
}

int intercept_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  if (!memory::on_device(buf)) {
    return real_mpi().Ibcast(buf, count, type, root, comm, request);
  }
  return report(coll::bcast(buf, count, type, root, comm, request), comm);
}

int intercept_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return report(coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr), comm);
}

int intercept_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return report(coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), comm);
}

int intercept_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return report(coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr), comm);
}

int intercept_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return report(coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), comm);
}

int intercept_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return report(coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), comm);
}

int intercept_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                comm);
  }
  return report(
      coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), comm);
}

int intercept_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return report(coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm);
}

int intercept_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  }
  return report(coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
                comm);
}

int intercept_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return report(coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm);
}

int intercept_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return report(coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
                comm);
}

int intercept_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  }
  return report(coll::reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm), comm);
}

int intercept_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  }
  return report(coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm), comm);
}

int intercept_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Scan(sendbuf, recvbuf, count, type, op, comm);
  }
  return report(coll::scan(sendbuf, recvbuf, count, type, op, comm), comm);
}

int intercept_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real_mpi().Exscan(sendbuf, recvbuf, count, type, op, comm);
  }
  return report(coll::exscan(sendbuf, recvbuf, count, type, op, comm), comm);
}

}  // namespace cumpi::wrappers
