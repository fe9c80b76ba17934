// Collectives: host buffers to the real function, device buffers (either
// side, on any rank independently) to the engine: the collectives an
// algorithm may take through the collective seam (coll/selection.h), the
// others to the staged path.
#include "coll/agreement.h"
#include "coll/hierarchy.h"
#include "coll/selection.h"
#include "coll/staged_collectives.h"
#include "memory/classifier.h"
#include "mpi_wrappers/intercept.h"

namespace cumpi::wrappers {

namespace {
bool any_on_device(const void* sendbuf, const void* recvbuf) {
  return memory::on_device(sendbuf) || memory::on_device(recvbuf);
}

// A collective of the seam on host buffers: announced where the
// communicator's ranks agree on GPU algorithms, then the MPI library's.
template <typename RealCall>
int host_seam_call(MPI_Comm comm, const MPI_Request* request, const RealCall& real_call) {
  coll::announce_host_call(comm, request == nullptr);
  return real_call();
}

// The call as the seam takes it, its buffers located (asked once per call
// and buffer, DESIGN §2 rule 3).
template <typename DescribeCall>
coll::CollectiveCall located_call(const DescribeCall& describe) {
  coll::CollectiveCall call = describe();
  call.send_where = memory::locate(call.sendbuf, call.send_count, call.send_type);
  const bool exchange = call.collective == coll::Collective::allgather || call.collective == coll::Collective::alltoall;
  call.recv_where = exchange ? memory::locate(call.recvbuf, call.recv_count, call.recv_type)
                             : memory::locate(call.recvbuf, call.send_count, call.send_type);
  return call;
}

// A blocking call on host buffers while CUMPI_COLL_HIERARCHY is on: where
// the hierarchy takes it, every rank must run it in steps, this one too.
template <typename RealCall>
int host_call_maybe_in_steps(const coll::CollectiveCall& call, const RealCall& real_call, const char* caller) {
  bool in_steps = false;
  const int rc = in_engine(
      call.comm, [&] { return coll::run_if_hierarchical(call, &in_steps); }, caller);
  return in_steps ? rc : host_seam_call(call.comm, call.request, real_call);
}

// A collective of the seam (coll/selection.h). Buffers known to be host
// memory (coll/agreement.h's announcement first, where the communicator's
// ranks agree on GPU algorithms) go to the MPI library before the call is
// even described: describing it costs a few hundred bytes of stores, a
// tenth of an 8-byte Bcast. Otherwise where its buffers lie is asked once,
// and device buffers go to the engine. With CUMPI_COLL_HIERARCHY on,
// blocking calls are described whatever their buffers.
template <typename DescribeCall, typename RealCall>
int seam_call(const void* sendbuf, const void* recvbuf, MPI_Comm comm, MPI_Request* request,
              const DescribeCall& describe, const RealCall& real_call, const char* caller = __builtin_FUNCTION()) {
  // Which collective this is, and so whether it may go in steps, is known
  // only once it is described.
  const bool describe_host_calls = coll::hierarchy_on() && request == nullptr;
  if (__builtin_expect(memory::known_host(sendbuf) && memory::known_host(recvbuf) && !describe_host_calls, 1)) {
    return host_seam_call(comm, request, real_call);
  }
  const coll::CollectiveCall call = located_call(describe);
  if (!memory::is_device(call.send_where) && !memory::is_device(call.recv_where)) {
    return coll::may_go_in_steps(call) ? host_call_maybe_in_steps(call, real_call, caller)
                                       : host_seam_call(comm, request, real_call);
  }
  return in_engine(
      comm, [call] { return coll::run_collective(call); }, caller);
}

coll::CollectiveCall reduction_call(coll::Collective collective, const void* sendbuf, void* recvbuf, int count,
                                    MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  coll::CollectiveCall call;
  call.collective = collective;
  call.sendbuf = sendbuf;
  call.recvbuf = recvbuf;
  call.send_count = count;
  call.send_type = type;
  call.op = op;
  call.comm = comm;
  call.request = request;
  return call;
}

coll::CollectiveCall allreduce_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm, MPI_Request* request) {
  return reduction_call(coll::Collective::allreduce, sendbuf, recvbuf, count, type, op, comm, request);
}

coll::CollectiveCall reduce_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                                 MPI_Comm comm, MPI_Request* request) {
  coll::CollectiveCall call =
      reduction_call(coll::Collective::reduce, sendbuf, recvbuf, count, type, op, comm, request);
  call.root = root;
  return call;
}

coll::CollectiveCall reduce_scatter_block_call(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return reduction_call(coll::Collective::reduce_scatter_block, sendbuf, recvbuf, recvcount, type, op, comm, request);
}

coll::CollectiveCall bcast_call(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                                MPI_Request* request) {
  coll::CollectiveCall call =
      reduction_call(coll::Collective::bcast, nullptr, buf, count, type, MPI_Op{}, comm, request);
  call.root = root;
  return call;
}

// MPI_Allgather, MPI_Alltoall: blocks of one signature sent and received.
coll::CollectiveCall exchange_call(coll::Collective collective, const void* sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request* request) {
  coll::CollectiveCall call =
      reduction_call(collective, sendbuf, recvbuf, sendcount, sendtype, MPI_Op{}, comm, request);
  call.recv_count = recvcount;
  call.recv_type = recvtype;
  return call;
}
}  // namespace

int intercept_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return seam_call(
      sendbuf, recvbuf, comm, nullptr, [=] { return allreduce_call(sendbuf, recvbuf, count, type, op, comm, nullptr); },
      [=] { return real().Allreduce(sendbuf, recvbuf, count, type, op, comm); });
}

int intercept_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                         MPI_Request* request) {
  return seam_call(
      sendbuf, recvbuf, comm, request, [=] { return allreduce_call(sendbuf, recvbuf, count, type, op, comm, request); },
      [=] { return real().Iallreduce(sendbuf, recvbuf, count, type, op, comm, request); });
}

int intercept_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                     MPI_Comm comm) {
  return seam_call(
      sendbuf, recvbuf, comm, nullptr,
      [=] { return reduce_call(sendbuf, recvbuf, count, type, op, root, comm, nullptr); },
      [=] { return real().Reduce(sendbuf, recvbuf, count, type, op, root, comm); });
}

int intercept_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                      MPI_Comm comm, MPI_Request* request) {
  return seam_call(
      sendbuf, recvbuf, comm, request,
      [=] { return reduce_call(sendbuf, recvbuf, count, type, op, root, comm, request); },
      [=] { return real().Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request); });
}

int intercept_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return seam_call(
      buf, buf, comm, nullptr, [=] { return bcast_call(buf, count, type, root, comm, nullptr); },
      [=] { return real().Bcast(buf, count, type, root, comm); });
}

int intercept_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  return seam_call(
      buf, buf, comm, request, [=] { return bcast_call(buf, count, type, root, comm, request); },
      [=] { return real().Ibcast(buf, count, type, root, comm, request); });
}

int intercept_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm) {
  return seam_call(
      sendbuf, recvbuf, comm, nullptr,
      [=] {
        return exchange_call(coll::Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, nullptr);
      },
      [=] { return real().Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

int intercept_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return seam_call(
      sendbuf, recvbuf, comm, request,
      [=] {
        return exchange_call(coll::Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, request);
      },
      [=] { return real().Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); });
}

int intercept_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm) {
  return seam_call(
      sendbuf, recvbuf, comm, nullptr,
      [=] {
        return exchange_call(coll::Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, nullptr);
      },
      [=] { return real().Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

int intercept_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return seam_call(
      sendbuf, recvbuf, comm, request,
      [=] {
        return exchange_call(coll::Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, request);
      },
      [=] { return real().Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); });
}

int intercept_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nullptr);
  });
}

int intercept_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           nullptr);
  });
}

int intercept_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
  });
}

int intercept_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                      const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, nullptr);
  });
}

int intercept_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
  });
}

int intercept_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return in_engine(comm, [=] {
    return coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
  });
}

int intercept_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, nullptr); });
}

int intercept_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm) {
  return seam_call(
      sendbuf, recvbuf, comm, nullptr,
      [=] { return reduce_scatter_block_call(sendbuf, recvbuf, recvcount, type, op, comm, nullptr); },
      [=] { return real().Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); });
}

int intercept_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Scan(sendbuf, recvbuf, count, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::scan(sendbuf, recvbuf, count, type, op, comm, nullptr); });
}

int intercept_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Exscan(sendbuf, recvbuf, count, type, op, comm);
  }
  return in_engine(comm, [=] { return coll::exscan(sendbuf, recvbuf, count, type, op, comm, nullptr); });
}

int intercept_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  });
}

int intercept_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                             request);
  }
  return in_engine(comm, [=] {
    return coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  });
}

int intercept_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  }
  return in_engine(comm, [=] {
    return coll::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                           nullptr);
  });
}

int intercept_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                             request);
  }
  return in_engine(comm, [=] {
    return coll::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                           request);
  });
}

int intercept_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  });
}

int intercept_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  });
}

int intercept_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  });
}

int intercept_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  });
}

int intercept_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  }
  return in_engine(comm, [=] { return coll::reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request); });
}

int intercept_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                                    MPI_Comm comm, MPI_Request* request) {
  return seam_call(
      sendbuf, recvbuf, comm, request,
      [=] { return reduce_scatter_block_call(sendbuf, recvbuf, recvcount, type, op, comm, request); },
      [=] { return real().Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request); });
}

int intercept_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                    MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iscan(sendbuf, recvbuf, count, type, op, comm, request);
  }
  return in_engine(comm, [=] { return coll::scan(sendbuf, recvbuf, count, type, op, comm, request); });
}

int intercept_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                      MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  }
  return in_engine(comm, [=] { return coll::exscan(sendbuf, recvbuf, count, type, op, comm, request); });
}

int intercept_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
}

int intercept_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

int intercept_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                     nullptr);
  });
}

int intercept_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                       request);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                     request);
  });
}

int intercept_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
}

int intercept_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

int intercept_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                     comm);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, nullptr);
  });
}

int intercept_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                      comm, request);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, request);
  });
}

int intercept_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                     comm);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                    comm, nullptr);
  });
}

int intercept_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  MPI_Request* request) {
  if (!any_on_device(sendbuf, recvbuf)) {
    return real().Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                      comm, request);
  }
  return in_engine(comm, [=] {
    return coll::neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                    comm, request);
  });
}

// Errors of MPI_Reduce_local, which has no communicator, go to
// MPI_COMM_WORLD (MPI 3.1, as the MPIs below cumpi implement).
int intercept_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype type, MPI_Op op) {
  if (!any_on_device(inbuf, inoutbuf)) {
    return real().Reduce_local(inbuf, inoutbuf, count, type, op);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return coll::reduce_local(inbuf, inoutbuf, count, type, op); });
}

}  // namespace cumpi::wrappers
