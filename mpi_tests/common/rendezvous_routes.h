// Device messages to a rank go eagerly, in plain MPI format, until that rank
// lets the sender send it envelopes (it answers in its device receives).
// Tests that want the rendezvous routes, as a running application has them,
// exchange a few device messages between every pair of ranks first (a large
// truncated eager message would also meet Open MPI 4.1's own bug, see
// truncation.cc).
#pragma once

#include <mpi.h>

namespace cumpi_test {

// Collective over `comm`: four rounds of 4 KiB device messages between
// every pair of its ranks, then a barrier.
void establish_rendezvous_routes(MPI_Comm comm);

}  // namespace cumpi_test
