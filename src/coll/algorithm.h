// The collective seam (DESIGN §5): an algorithm is a plain object that may
// take a collective call on device buffers, as Open MPI's coll modules do.
// Algorithms are tried in CUMPI_COLL's order and the first that takes the
// call runs it. Every rank of the communicator must take the same one, so
// an algorithm decides only from what every rank of the call computes
// alike: the communicator's context (its members and their nodes, from the
// job's node map) and the call's arguments that MPI requires to match
// (counts and types of the same signature, op, root) - never from this
// rank's own buffers; what a rank's buffers allow it offers, and the ranks
// agree (coll/agreement_board.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/device_memory.h"
#include "protocol/comm_context.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::coll {

// The collectives an algorithm may take. Vector, w, scan and neighbourhood
// collectives are staged only (coll/staged_collectives.h).
enum class Collective : unsigned { allreduce, reduce, bcast, allgather, alltoall, reduce_scatter_block, count };
const char* collective_name(Collective collective);

class AgreementBoard;

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
  // Where the wrapper found the buffers (memory::locate): asked once per
  // call and buffer (DESIGN §2, rule 3).
  memory::PointerInfo send_where;
  memory::PointerInfo recv_where;
  // Set by the selection for an algorithm every rank agreed on: the
  // communicator's board and the call's number there.
  AgreementBoard* board = nullptr;
  std::uint64_t agreed_call = 0;
  // Where the chosen algorithm's offer lies in every rank's board payload.
  std::size_t payload_offset = 0;
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
  // For an algorithm that cannot run beside host ranks, after takes() said
  // yes: what this rank offers the others for the call (its buffers' IPC
  // handles, its GPU), written into `payload` (offer_bytes() of this
  // rank's board payload, the algorithm's own region), from this rank's own
  // buffers; false with why when it cannot.
  virtual std::size_t offer_bytes() const { return 0; }
  virtual bool offer(const CollectiveCall&, void* /*payload*/, std::string* /*why_not*/) { return true; }
  // After every rank offered it: whether the offers together allow it,
  // decided from every rank's region of the board (call.payload_offset)
  // only, so that every rank decides alike (nccl: one GPU per rank).
  virtual bool accepts(const CollectiveCall& /*call*/, std::string* /*why_not*/) const { return true; }
  // An agreed algorithm's run() starts with a step every rank of the call
  // waits for (AgreementBoard::arrive, wait_all): until then a rank still
  // reading the agreement must not see another past the call.
  virtual Status run(const CollectiveCall& call) = 0;
};

}  // namespace cumpi::coll
