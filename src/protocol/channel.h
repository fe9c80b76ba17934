// The private channel of the rendezvous protocol (DESIGN §3): a duplicate of
// MPI_COMM_WORLD made at MPI_Init, on which FIN, pull requests and pipeline
// chunks travel, addressed by world rank and tagged by message id, so that
// they never match a user's receive. Also the cookie that marks envelopes,
// the same on every rank.
#pragma once

#include <cstdint>
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// Each message id has a reply, a chunk and a back tag.
constexpr int kTagsPerMessage = 3;

struct Channel {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t cookie = 0;  // random, the same on every rank
  int world_rank = -1;
  int pid = 0;
  int tag_space = 1;  // message ids map to tags in [0, kTagsPerMessage * tag_space)
};

// Collective over MPI_COMM_WORLD, at MPI_Init.
Status open_channel();
// At MPI_Finalize, after the last device operation.
void close_channel();
bool channel_open();
// Whether every rank of the job set CUMPI_COLL_HIERARCHY (learnt at
// MPI_Init with the channel; false before and after).
bool every_rank_asks_hierarchy();
const Channel& channel();

// A new id for a rendezvous message of this rank (unique among its
// outstanding messages).
std::uint64_t next_message_id();
// Receiver -> sender: FIN and pull requests. The sender's ids are its own,
// so it may listen with MPI_ANY_SOURCE.
int reply_tag(std::uint64_t message_id);
// Sender -> receiver: pipeline chunks, received from one source only.
int chunk_tag(std::uint64_t message_id);
// Receiver -> sender, from one source only: a transport's own answer (the
// ucx handshake's worker address).
int back_tag(std::uint64_t message_id);
// The first tag above every message's: short envelopes and grants.
int tag_above_messages();

}  // namespace cumpi::protocol
