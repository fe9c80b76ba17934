// The private channel of the rendezvous protocol (DESIGN §3): a duplicate of
// MPI_COMM_WORLD made at MPI_Init, on which FIN, pull requests and pipeline
// chunks travel, addressed by world rank and tagged by message id, so that
// they never match a user's receive. Also what every rank agreed at init: the
// cookie that marks envelopes, and which ranks share a node.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

struct Channel {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t cookie = 0;  // random, the same on every rank
  int world_rank = -1;
  int node = -1;             // the lowest world rank on this rank's node
  int pid = 0;
  int tag_space = 1;         // message ids map to tags in [0, 2 * tag_space)
  std::vector<int> nodes;    // the node of every world rank
  MPI_Group world_group{};
};

// Collective over MPI_COMM_WORLD, at MPI_Init.
Status open_channel();
// At MPI_Finalize, after the last device operation.
void close_channel();
bool channel_open();
const Channel& channel();

// The world rank of `rank` in comm (of its remote group for an
// inter-communicator); -1 when it cannot be told.
int world_rank_of(MPI_Comm comm, int rank);
bool on_this_node(int world_rank);

// A new id for a rendezvous message of this rank (unique among its
// outstanding messages).
std::uint64_t next_message_id();
// Receiver -> sender: FIN and pull requests. The sender's ids are its own,
// so it may listen with MPI_ANY_SOURCE.
int reply_tag(std::uint64_t message_id);
// Sender -> receiver: pipeline chunks, received from one source only.
int chunk_tag(std::uint64_t message_id);

}  // namespace cumpi::protocol
