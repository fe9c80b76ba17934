#include "protocol/comm_context.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <set>

#include "protocol/node_map.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

// The attribute's value: one reference to the context.
using Holder = std::shared_ptr<CommContext>;

int g_keyval = MPI_KEYVAL_INVALID;
MPI_Group g_world_group{};
std::shared_ptr<CommContext> g_world;
std::set<CommContext*> g_live;  // under the engine lock
std::atomic<std::uint64_t> g_made{0};
std::atomic<std::uint64_t> g_released{0};

// Duplicates make their own context (their groups are the same, but an
// algorithm's state, an NCCL communicator say, must not be shared).
int copy_nothing(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int release_context(MPI_Comm, int, void* value, void*) {
  const runtime::EngineEntry entry;  // the user's thread, in MPI_Comm_free
  auto* holder = static_cast<Holder*>(value);
  g_live.erase(holder->get());
  delete holder;
  g_context_generation.fetch_add(1, std::memory_order_acq_rel);
  g_released.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

// The world ranks of every member of `group`, in rank order.
Status world_ranks_of(MPI_Group group, std::vector<int>* out) {
  const RealMpi& mpi = real_mpi();
  int size = 0;
  int rc = mpi.Group_size(group, &size);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::iota(ranks.begin(), ranks.end(), 0);
  out->assign(ranks.size(), MPI_UNDEFINED);
  if (size > 0) {
    rc = mpi.Group_translate_ranks(group, size, ranks.data(), g_world_group, out->data());
  }
  // A rank of another job (connected by MPI_Comm_connect) has no world rank.
  std::replace(out->begin(), out->end(), static_cast<int>(MPI_UNDEFINED), -1);
  return from_mpi(rc);
}

Status group_world_ranks(MPI_Comm comm, bool remote, std::vector<int>* out) {
  const RealMpi& mpi = real_mpi();
  MPI_Group group{};
  const int rc = remote ? mpi.Comm_remote_group(comm, &group) : mpi.Comm_group(comm, &group);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  Status status = world_ranks_of(group, out);
  mpi.Group_free(&group);
  return status;
}

Status make_context(MPI_Comm comm, std::shared_ptr<CommContext>* out) {
  int inter = 0;
  const int rc = real_mpi().Comm_test_inter(comm, &inter);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  std::vector<int> group;
  Status status = group_world_ranks(comm, false, &group);
  if (!status.is_ok()) {
    return status;
  }
  std::vector<int> peers;
  if (inter == 0) {
    peers = group;
  } else {
    status = group_world_ranks(comm, true, &peers);
    if (!status.is_ok()) {
      return status;
    }
  }
  *out = std::make_shared<CommContext>(std::move(peers), std::move(group), inter != 0);
  g_made.fetch_add(1, std::memory_order_relaxed);
  return Status::ok();
}

}  // namespace

CommContext::CommContext(std::vector<int> peers, std::vector<int> group, bool inter)
    : peers_(std::move(peers)), group_(std::move(group)), inter_(inter) {
  std::set<int> nodes;
  for (const std::vector<int>* members : {&peers_, &group_}) {
    for (const int world : *members) {
      nodes.insert(node_of(world));  // -1: outside this job, counted as one more node
    }
  }
  nodes_ = static_cast<int>(nodes.size());
}

int CommContext::world_rank(int rank) const {
  return rank >= 0 && rank < size() ? peers_[static_cast<std::size_t>(rank)] : -1;
}

CommState* CommContext::state(const std::string& name) const {
  const auto found = states_.find(name);
  return found == states_.end() ? nullptr : found->second.get();
}

void CommContext::set_state(const std::string& name, std::unique_ptr<CommState> state) {
  states_[name] = std::move(state);
}

std::shared_ptr<CommContext> context_of(MPI_Comm comm, Status* status) {
  *status = Status::ok();
  if (comm == MPI_COMM_WORLD && g_world != nullptr) {
    return g_world;
  }
  if (comm == MPI_COMM_NULL) {
    *status = Status::error(StatusCode::bad_communicator, "MPI_COMM_NULL has no ranks");
    return nullptr;
  }
  const RealMpi& mpi = real_mpi();
  Holder* holder = nullptr;
  int found = 0;
  if (g_keyval != MPI_KEYVAL_INVALID) {
    const int rc = mpi.Comm_get_attr(comm, g_keyval, &holder, &found);
    if (rc != MPI_SUCCESS) {
      *status = from_mpi(rc);
      return nullptr;
    }
  }
  if (found != 0) {
    return *holder;
  }
  std::shared_ptr<CommContext> made;
  *status = make_context(comm, &made);
  if (!status->is_ok() || g_keyval == MPI_KEYVAL_INVALID) {
    return made;  // before MPI_Init or after MPI_Finalize: used once, not kept
  }
  auto* kept = new Holder(made);
  const int rc = mpi.Comm_set_attr(comm, g_keyval, kept);
  if (rc != MPI_SUCCESS) {
    delete kept;
    g_released.fetch_add(1, std::memory_order_relaxed);
    *status = from_mpi(rc);
    return nullptr;
  }
  g_live.insert(made.get());
  CUMPI_LOG(debug, "communicator context made: %d ranks on %d node%s%s", made->size(), made->nodes(),
            made->nodes() == 1 ? "" : "s", made->inter() ? ", inter-communicator" : "");
  return made;
}

CommContext* kept_context_of(MPI_Comm comm, Status* status) {
  if (comm == MPI_COMM_WORLD && g_world != nullptr) {
    *status = Status::ok();
    return g_world.get();
  }
  if (g_keyval == MPI_KEYVAL_INVALID) {
    *status = Status::ok();
    return nullptr;
  }
  return context_of(comm, status).get();  // the attribute keeps it alive
}

int world_rank_of(MPI_Comm comm, int rank) {
  if (comm == MPI_COMM_WORLD) {
    return rank;
  }
  Status status;
  const std::shared_ptr<CommContext> context = context_of(comm, &status);
  return context == nullptr ? -1 : context->world_rank(rank);
}

Status start_comm_contexts() {
  const RealMpi& mpi = real_mpi();
  int rc = mpi.Comm_group(MPI_COMM_WORLD, &g_world_group);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  Status status = make_context(MPI_COMM_WORLD, &g_world);
  if (!status.is_ok()) {
    return status;
  }
  rc = mpi.Comm_create_keyval(copy_nothing, release_context, &g_keyval, nullptr);
  return from_mpi(rc);
}

// The attributes stay: MPI deletes them with their communicators (those
// still alive at MPI_Finalize are never freed; their contexts go with the
// process). What must not outlive MPI is each algorithm's state.
void stop_comm_contexts() {
  // Releasing one context's state may free communicators of cumpi's own
  // (the hierarchy's), whose contexts then leave g_live.
  g_context_generation.fetch_add(1, std::memory_order_acq_rel);
  const std::vector<CommContext*> live(g_live.begin(), g_live.end());
  for (CommContext* context : live) {
    if (g_live.count(context) != 0) {
      context->release_states();
    }
  }
  if (g_world != nullptr) {
    g_world->release_states();
    g_world.reset();
    g_released.fetch_add(1, std::memory_order_relaxed);
  }
  if (g_keyval != MPI_KEYVAL_INVALID) {
    real_mpi().Comm_free_keyval(&g_keyval);
    g_keyval = MPI_KEYVAL_INVALID;
  }
  real_mpi().Group_free(&g_world_group);
}

CommContextCounts comm_context_counts() {
  return CommContextCounts{g_made.load(std::memory_order_relaxed), g_released.load(std::memory_order_relaxed)};
}

}  // namespace cumpi::protocol
