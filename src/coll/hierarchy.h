// Hierarchical collectives across nodes (CUMPI_COLL_HIERARCHY, DESIGN §5):
// MPI_Allreduce, MPI_Reduce, MPI_Bcast and MPI_Allgather on a communicator
// whose ranks span several nodes, some holding two or more of them, run as
// collectives of the seam within each node (ipc where that node's buffers
// are all on a device) and one between one rank per node (staged).
//
// A rank passing host buffers would otherwise hand the call to the MPI
// library on the whole communicator, where a hierarchical rank never comes;
// so the hierarchy is taken by every rank, host buffers too, decided from
// facts every rank shares: the setting (on only where every rank of the job
// asked for it, learnt at MPI_Init), the communicator's nodes, and the
// call's matching arguments.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "coll/algorithm.h"
#include "runtime/status.h"

namespace cumpi::coll {

// Whether blocking seam calls on host buffers must ask run_if_hierarchical
// first: set at MPI_Init where every rank of the job asked for it, cleared
// at MPI_Finalize. Read by the entry points' pass-through tests.
inline std::atomic<bool> g_hierarchy_on{false};
inline bool hierarchy_on() { return g_hierarchy_on.load(std::memory_order_relaxed); }
inline void set_hierarchy_on(bool on) { g_hierarchy_on.store(on, std::memory_order_relaxed); }

// The calls that may go in steps while it is on: blocking MPI_Allreduce,
// MPI_Reduce, MPI_Bcast and MPI_Allgather. Whether one does depends on its
// communicator too.
inline bool may_go_in_steps(const CollectiveCall& call) {
  return call.request == nullptr &&
         (call.collective == Collective::allreduce || call.collective == Collective::reduce ||
          call.collective == Collective::bcast || call.collective == Collective::allgather) &&
         hierarchy_on();
}

// Runs a blocking call of the seam in steps where the hierarchy takes it
// (*taken true), else leaves it to the caller (*taken false, ok). Every
// rank of the communicator decides alike. The call's buffers are located.
Status run_if_hierarchical(const CollectiveCall& call, bool* taken);

// Where the ranks of a communicator lie, from each rank's node: the same on
// every rank, so that the steps' communicators and roots are.
struct HierarchyLayout {
  std::vector<int> local_rank;  // each rank's among its node's ranks, in rank order
  std::vector<int> node_index;  // each rank's node, nodes numbered in the order of their lowest ranks
  std::vector<int> node_sizes;  // by node_index
  // Every node's ranks consecutive and every node of the same size (block
  // placement, mpirun's and srun's default): an Allgather's node blocks
  // then lie in the receive buffer as the nodes' leaders gather them.
  bool equal_blocks = false;
};
HierarchyLayout layout_of(const std::vector<int>& node_of_rank);

// Calls run in steps so far (cumpi_get_coll_info).
std::uint64_t hierarchical_calls();

}  // namespace cumpi::coll
