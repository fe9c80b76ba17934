// The collective seam (DESIGN §5): an algorithm is a plain object that may
// take a collective call on device buffers, as Open MPI's coll modules do.
// Algorithms are tried in CUMPI_COLL's order and the first that takes the
// call runs it. Every rank of the communicator must take the same one, so
// an algorithm decides only from what every rank of the call computes
// alike: the communicator's context (its members and their nodes, from the
// job's node map) and the call's arguments that MPI requires to match
// (counts and types of the same signature, op, root) - never from this
// rank's own buffers.
#pragma once

#include <string>

#include "protocol/comm_context.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::coll {

// The collectives an algorithm may take. Vector, w, scan and neighbourhood
// collectives are staged only (coll/staged_collectives.h).
enum class Collective : unsigned { allreduce, reduce, bcast, allgather, alltoall, reduce_scatter_block, count };
const char* collective_name(Collective collective);

// One call's arguments. Reductions and MPI_Bcast use send_count and
// send_type for their count (MPI_Reduce_scatter_block's: per block) and
// type; MPI_Bcast's buffer is recvbuf.
struct CollectiveCall {
  Collective collective = Collective::allreduce;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  int send_count = 0;
  MPI_Datatype send_type{};
  int recv_count = 0;
  MPI_Datatype recv_type{};
  MPI_Op op{};  // reductions only
  int root = 0;
  MPI_Comm comm{};
  MPI_Request* request = nullptr;  // null: the blocking call
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual const char* name() const = 0;
  // Whether the algorithm may run on the ranks whose buffers are on a
  // device while the others pass the same call straight to the MPI library
  // (each rank sees only its own buffers). Only the staged algorithm can:
  // it is the MPI library's own collective on host copies. An algorithm
  // that cannot needs every rank to agree first that all buffers of the
  // call are device memory.
  virtual bool runs_beside_host_ranks() const = 0;
  // From `context` and the call's matching arguments only; `why_not` says
  // why when it declines.
  virtual bool takes(const protocol::CommContext& context, const CollectiveCall& call, std::string* why_not) const = 0;
  virtual Status run(const CollectiveCall& call) = 0;
};

}  // namespace cumpi::coll
