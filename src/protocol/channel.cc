#include "protocol/channel.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "protocol/envelope_grants.h"
#include "protocol/short_envelope.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

Channel g_channel;
bool g_open = false;
std::atomic<std::uint64_t> g_next_id{1};

std::uint64_t random_cookie() {
  std::uint64_t cookie = 0;
  if (getrandom(&cookie, sizeof(cookie), 0) != sizeof(cookie)) {
    cookie = static_cast<std::uint64_t>(getpid()) * 0x9e3779b97f4a7c15ULL ^ 0x636f6f6b6965ULL;
  }
  return cookie;
}

// The lowest world rank among the ranks that share this rank's node.
Status find_node(const RealMpi& mpi, int world_rank, int* node) {
  MPI_Comm local = MPI_COMM_NULL;
  int rc = mpi.Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  int local_size = 0;
  mpi.Comm_size(local, &local_size);
  std::vector<int> ranks(static_cast<std::size_t>(local_size));
  rc = mpi.Allgather(&world_rank, static_cast<int>(sizeof(int)), MPI_BYTE, ranks.data(),
                     static_cast<int>(sizeof(int)), MPI_BYTE, local);
  mpi.Comm_free(&local);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  *node = *std::min_element(ranks.begin(), ranks.end());
  return Status::ok();
}

int world_size(const RealMpi& mpi) {
  int size = 0;
  mpi.Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace

Status open_channel() {
  const RealMpi& mpi = real_mpi();
  Channel opened;
  mpi.Comm_rank(MPI_COMM_WORLD, &opened.world_rank);
  opened.pid = static_cast<int>(getpid());
  int rc = mpi.Comm_dup(MPI_COMM_WORLD, &opened.comm);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  opened.cookie = random_cookie();
  rc = mpi.Bcast(&opened.cookie, static_cast<int>(sizeof(opened.cookie)), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  Status status = find_node(mpi, opened.world_rank, &opened.node);
  if (!status.is_ok()) {
    return status;
  }
  // Each rank's node, and whether it takes short envelopes (its own
  // CUMPI_SHORT_ENVELOPES: senders follow the receiver's choice).
  const int size = world_size(mpi);
  const int mine[2] = {opened.node, config().short_envelopes ? 1 : 0};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  rc = mpi.Allgather(mine, static_cast<int>(sizeof(mine)), MPI_BYTE, all.data(), static_cast<int>(sizeof(mine)),
                     MPI_BYTE, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  std::vector<int> takes_short(static_cast<std::size_t>(size));
  opened.nodes.resize(static_cast<std::size_t>(size));
  for (std::size_t rank = 0; rank < opened.nodes.size(); ++rank) {
    opened.nodes[rank] = all[2 * rank];
    takes_short[rank] = all[2 * rank + 1];
  }
  mpi.Comm_group(MPI_COMM_WORLD, &opened.world_group);
  int* tag_upper_bound = nullptr;
  int found = 0;
  mpi.Comm_get_attr(opened.comm, MPI_TAG_UB, &tag_upper_bound, &found);
  // Message ids take tags [0, 2 * tag_space); short envelopes and grants the
  // two above.
  opened.tag_space = (found != 0 && tag_upper_bound != nullptr) ? std::max(1, (*tag_upper_bound - 1) / 2) : 16383;
  g_channel = opened;
  g_open = true;
  set_short_watchers(mine[1] != 0, takes_short.data(), size);
  start_grants(size);
  return Status::ok();
}

void close_channel() {
  if (g_open) {
    stop_grants();
    set_short_watchers(false, nullptr, 0);
    real_mpi().Group_free(&g_channel.world_group);
    real_mpi().Comm_free(&g_channel.comm);
    g_open = false;
  }
}

bool channel_open() { return g_open; }

const Channel& channel() { return g_channel; }

int world_rank_of(MPI_Comm comm, int rank) {
  if (comm == MPI_COMM_WORLD) {
    return rank;
  }
  const RealMpi& mpi = real_mpi();
  int inter = 0;
  mpi.Comm_test_inter(comm, &inter);
  MPI_Group group{};
  if ((inter != 0 ? mpi.Comm_remote_group(comm, &group) : mpi.Comm_group(comm, &group)) != MPI_SUCCESS) {
    return -1;
  }
  // Open MPI translates ranks outside the group without checking them;
  // the real call the caller falls back to reports MPI_ERR_RANK for them.
  int group_size = 0;
  int world = -1;
  if (mpi.Group_size(group, &group_size) != MPI_SUCCESS || rank < 0 || rank >= group_size ||
      mpi.Group_translate_ranks(group, 1, &rank, g_channel.world_group, &world) != MPI_SUCCESS ||
      world == MPI_UNDEFINED) {
    world = -1;
  }
  mpi.Group_free(&group);
  return world;
}

bool on_this_node(int world_rank) {
  return world_rank >= 0 && static_cast<std::size_t>(world_rank) < g_channel.nodes.size() &&
         g_channel.nodes[static_cast<std::size_t>(world_rank)] == g_channel.node;
}

std::uint64_t next_message_id() { return g_next_id.fetch_add(1, std::memory_order_relaxed); }

int reply_tag(std::uint64_t message_id) {
  return static_cast<int>(message_id % static_cast<std::uint64_t>(g_channel.tag_space)) * 2;
}

int chunk_tag(std::uint64_t message_id) { return reply_tag(message_id) + 1; }

}  // namespace cumpi::protocol
