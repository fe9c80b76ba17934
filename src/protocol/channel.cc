#include "protocol/channel.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "protocol/envelope_grants.h"
#include "protocol/pull.h"
#include "protocol/short_envelope.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

Channel g_channel;
bool g_open = false;
bool g_hierarchy = false;

// The bits of a rank's settings in the exchange at MPI_Init.
constexpr int kTakesShortEnvelopes = 1;
constexpr int kAsksHierarchy = 2;

std::atomic<std::uint64_t> g_next_id{1};

std::uint64_t random_cookie() {
  std::uint64_t cookie = 0;
  if (getrandom(&cookie, sizeof(cookie), 0) != sizeof(cookie)) {
    cookie = static_cast<std::uint64_t>(getpid()) * 0x9e3779b97f4a7c15ULL ^ 0x636f6f6b6965ULL;
  }
  return cookie;
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
  // Each rank's own settings that the others must know: whether it takes
  // short envelopes (senders follow the receiver's choice) and whether it
  // asks for hierarchical collectives (on only where every rank asks).
  const int size = world_size(mpi);
  const int settings_here = (config().short_envelopes ? kTakesShortEnvelopes : 0) |
                            (config().coll_hierarchy ? kAsksHierarchy : 0);
  std::vector<int> settings(static_cast<std::size_t>(size));
  rc = mpi.Allgather(&settings_here, 1, MPI_INT, settings.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  std::vector<int> takes_short(static_cast<std::size_t>(size));
  bool every_rank_asks_hierarchy = true;
  for (std::size_t rank = 0; rank < settings.size(); ++rank) {
    takes_short[rank] = (settings[rank] & kTakesShortEnvelopes) != 0 ? 1 : 0;
    every_rank_asks_hierarchy = every_rank_asks_hierarchy && (settings[rank] & kAsksHierarchy) != 0;
  }
  int* tag_upper_bound = nullptr;
  int found = 0;
  mpi.Comm_get_attr(opened.comm, MPI_TAG_UB, &tag_upper_bound, &found);
  // Message ids take tags [0, kTagsPerMessage * tag_space); short envelopes
  // and grants the two above.
  opened.tag_space =
      (found != 0 && tag_upper_bound != nullptr) ? std::max(1, (*tag_upper_bound - 1) / kTagsPerMessage) : 10922;
  g_channel = opened;
  g_open = true;
  set_short_watchers(config().short_envelopes, takes_short.data(), size);
  g_hierarchy = every_rank_asks_hierarchy;
  if (config().coll_hierarchy && !every_rank_asks_hierarchy) {
    CUMPI_LOG(warn, "CUMPI_COLL_HIERARCHY is set here but not on every rank: collectives are not hierarchical");
  }
  start_grants(size);
  learn_truncated_count();
  return Status::ok();
}

void close_channel() {
  if (g_open) {
    stop_grants();
    set_short_watchers(false, nullptr, 0);
    g_hierarchy = false;
    real_mpi().Comm_free(&g_channel.comm);
    g_open = false;
  }
}

bool channel_open() { return g_open; }

bool every_rank_asks_hierarchy() { return g_hierarchy; }

const Channel& channel() { return g_channel; }

std::uint64_t next_message_id() { return g_next_id.fetch_add(1, std::memory_order_relaxed); }

int reply_tag(std::uint64_t message_id) {
  return static_cast<int>(message_id % static_cast<std::uint64_t>(g_channel.tag_space)) * kTagsPerMessage;
}

int chunk_tag(std::uint64_t message_id) { return reply_tag(message_id) + 1; }

int back_tag(std::uint64_t message_id) { return reply_tag(message_id) + 2; }

int tag_above_messages() { return kTagsPerMessage * g_channel.tag_space; }

}  // namespace cumpi::protocol
