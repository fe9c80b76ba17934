// Which ranks of the job share a node: gathered once at MPI_Init, the same
// on every rank. A node is named by the lowest world rank on it.
#pragma once

#include <vector>

#include "runtime/status.h"

namespace cumpi::protocol {

// Collective over MPI_COMM_WORLD.
Status gather_node_map();
void forget_node_map();

int this_node();
// -1 for a rank outside the job (or before the map was gathered).
int node_of(int world_rank);
bool on_this_node(int world_rank);

// Replaces the map (unit tests; gather_node_map at MPI_Init).
void set_node_map(std::vector<int> nodes, int own_node);

}  // namespace cumpi::protocol
