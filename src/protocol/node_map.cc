#include "protocol/node_map.h"

#include <algorithm>

#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

std::vector<int> g_nodes;
int g_node = -1;

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
  rc = mpi.Allgather(&world_rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, local);
  mpi.Comm_free(&local);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  *node = *std::min_element(ranks.begin(), ranks.end());
  return Status::ok();
}

}  // namespace

Status gather_node_map() {
  const RealMpi& mpi = real_mpi();
  int world_rank = -1;
  int size = 0;
  mpi.Comm_rank(MPI_COMM_WORLD, &world_rank);
  mpi.Comm_size(MPI_COMM_WORLD, &size);
  int node = -1;
  Status status = find_node(mpi, world_rank, &node);
  if (!status.is_ok()) {
    return status;
  }
  std::vector<int> nodes(static_cast<std::size_t>(size));
  const int rc = mpi.Allgather(&node, 1, MPI_INT, nodes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  set_node_map(std::move(nodes), node);
  return Status::ok();
}

void forget_node_map() { set_node_map({}, -1); }

int this_node() { return g_node; }

int node_of(int world_rank) {
  return world_rank >= 0 && static_cast<std::size_t>(world_rank) < g_nodes.size()
             ? g_nodes[static_cast<std::size_t>(world_rank)]
             : -1;
}

bool on_this_node(int world_rank) { return g_node >= 0 && node_of(world_rank) == g_node; }

void set_node_map(std::vector<int> nodes, int own_node) {
  g_nodes = std::move(nodes);
  g_node = own_node;
}

}  // namespace cumpi::protocol
