#include "coll/staged_algorithm.h"

#include "coll/staged_collectives.h"

namespace cumpi::coll {

Status StagedAlgorithm::run(const CollectiveCall& call) {
  const CollectiveCall& c = call;
  const Located located{c.send_where, c.recv_where};
  const Located* l = &located;
  switch (c.collective) {
    case Collective::allreduce:
      return allreduce(c.sendbuf, c.recvbuf, c.send_count, c.send_type, c.op, c.comm, c.request, l);
    case Collective::reduce:
      return reduce(c.sendbuf, c.recvbuf, c.send_count, c.send_type, c.op, c.root, c.comm, c.request, l);
    case Collective::bcast:
      return bcast(c.recvbuf, c.send_count, c.send_type, c.root, c.comm, c.request, l);
    case Collective::allgather:
      return allgather(c.sendbuf, c.send_count, c.send_type, c.recvbuf, c.recv_count, c.recv_type, c.comm, c.request,
                       l);
    case Collective::alltoall:
      return alltoall(c.sendbuf, c.send_count, c.send_type, c.recvbuf, c.recv_count, c.recv_type, c.comm, c.request, l);
    case Collective::reduce_scatter_block:
      return reduce_scatter_block(c.sendbuf, c.recvbuf, c.send_count, c.send_type, c.op, c.comm, c.request, l);
    case Collective::count:
      break;
  }
  return Status::error(StatusCode::internal, "no such collective");
}

StagedAlgorithm& staged_algorithm() {
  static StagedAlgorithm* algorithm = new StagedAlgorithm();  // lives until exit
  return *algorithm;
}

}  // namespace cumpi::coll
