// Collectives on device buffers, staged: device->host, the MPI collective on
// host buffers, host->device. Correct for every op (user-defined ones run on
// host copies), datatype, MPI_IN_PLACE and communicator (DESIGN §5); faster
// algorithms may later decline to this. A null request means the blocking
// call, else the nonblocking one, whose staged buffers live until it
// completes.
#pragma once

#include "memory/device_memory.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::coll {

// Where the wrapper found a call's buffers (memory::locate: the owner of
// the first byte touched), so that staging asks the driver no more (DESIGN
// §2, rule 3). Without it each staged span is located afresh.
struct Located {
  memory::PointerInfo send;
  memory::PointerInfo receive;  // MPI_Bcast's one buffer
};

Status allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request, const Located* located = nullptr);
Status reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
              MPI_Request* request, const Located* located = nullptr);
Status bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request,
             const Located* located = nullptr);
Status allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const Located* located = nullptr);
Status alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const Located* located = nullptr);
Status allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
Status alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                 MPI_Request* request);
Status alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Request* request);
Status gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
Status gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
               const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
Status scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
Status scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
Status reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm, MPI_Request* request);
Status reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, MPI_Request* request, const Located* located = nullptr);
Status scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
            MPI_Request* request);
Status exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request);
// MPI_Reduce_local: inoutbuf = inbuf op inoutbuf, on host copies.
Status reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype type, MPI_Op op);

// Neighborhood collectives over comm's virtual topology (cartesian, graph
// or distributed graph): blocks per in- and out-neighbour.
Status neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
Status neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request);
Status neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
Status neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request* request);
Status neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request* request);

}  // namespace cumpi::coll
