// The engine's own state of one communicator: made the first time the
// engine needs it (a device send translating its destination, a collective
// choosing its algorithm), kept as an MPI attribute of the communicator,
// and released by the attribute's delete callback when the user frees the
// communicator (MPI_Comm_free, MPI_Comm_disconnect, or MPI_Finalize for
// MPI_COMM_SELF). Duplicates do not inherit it: each makes its own.
//
// Operations in flight never hold a context: a send translates its
// destination when it starts, so MPI's rule that operations pending on a
// freed communicator complete normally holds without it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// What a collective algorithm keeps per communicator (an NCCL communicator,
// the peers' IPC mappings). Destroyed with the context, or at MPI_Finalize
// for communicators the program never freed.
class CommState {
 public:
  virtual ~CommState() = default;
};

class CommContext {
 public:
  // `peers`: the world rank of every rank messages are addressed to (the
  // remote group of an inter-communicator); `group`: of every rank of the
  // local group, in rank order.
  CommContext(std::vector<int> peers, std::vector<int> group, bool inter);

  // The world rank of `rank`, -1 outside the communicator.
  int world_rank(int rank) const;
  int size() const { return static_cast<int>(peers_.size()); }
  bool inter() const { return inter_; }
  // Facts every rank of the communicator computes alike from the job's node
  // map: a choice made from them is the same on every rank.
  bool all_on_one_node() const { return nodes_ == 1; }
  int nodes() const { return nodes_; }

  // An algorithm's state by its name; null until set.
  CommState* state(const std::string& name) const;
  void set_state(const std::string& name, std::unique_ptr<CommState> state);
  // The collective layer's own state (its agreement board), asked on every
  // collective call, so kept apart from the named ones: null until set.
  CommState* collective_state() const { return collective_.get(); }
  void set_collective_state(std::unique_ptr<CommState> state) { collective_ = std::move(state); }
  void release_states() {
    states_.clear();
    collective_.reset();
  }

 private:
  std::vector<int> peers_;
  std::vector<int> group_;
  bool inter_ = false;
  int nodes_ = 0;
  std::map<std::string, std::unique_ptr<CommState>> states_;
  std::unique_ptr<CommState> collective_;
};

// The context of `comm`, made on first use; null with the MPI error in
// *status when the communicator's groups cannot be read (MPI_COMM_NULL, a
// freed handle).
std::shared_ptr<CommContext> context_of(MPI_Comm comm, Status* status);
// The same without a reference taken, for a call that uses the context only
// while it runs (the communicator cannot be freed meanwhile); null also
// before MPI_Init and after MPI_Finalize, when contexts are not kept.
CommContext* kept_context_of(MPI_Comm comm, Status* status);
// The world rank of `rank` in comm (of its remote group for an
// inter-communicator); -1 when it cannot be told.
int world_rank_of(MPI_Comm comm, int rank);

// Counts releases of contexts and of their states (a communicator freed,
// MPI_Finalize): what was found in a context before may be gone once it
// changed, and a freed handle may come back for another communicator.
inline std::atomic<std::uint64_t> g_context_generation{0};
inline std::uint64_t context_generation() { return g_context_generation.load(std::memory_order_acquire); }

// At MPI_Init, after the node map; at MPI_Finalize, before the real one
// (every algorithm's state is released then, contexts stay until MPI
// deletes the attributes).
Status start_comm_contexts();
void stop_comm_contexts();

struct CommContextCounts {
  std::uint64_t made = 0;
  std::uint64_t released = 0;
};
CommContextCounts comm_context_counts();

}  // namespace cumpi::protocol
