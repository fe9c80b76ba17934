// A peer killed (SIGKILL) in the middle of a device transfer: rank 1 sends a
// first message (which sets up the route, a handshake for ucx), then starts
// a 64 MiB device send and kills itself while rank 0 waits in the matching
// device receive. Rank 0 must not hang: its receive returns an MPI error
// (its communicator returns errors) or the launcher ends the job. Run by
// ends_without_hang.sh, which fails only on a timeout.
#include <mpi.h>

#include <csignal>
#include <cstdio>

#include "common/test_memory.h"

using namespace cumpi_test;

int main(int argc, char** argv) {
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int first_bytes = 300000;
  const int large_bytes = 64 << 20;
  Buffer first(Memory::device, first_bytes);
  Buffer large(Memory::device, large_bytes);
  if (rank == 1) {
    MPI_Send(first.data(), first_bytes, MPI_BYTE, 0, 1, comm);
    MPI_Request request;
    MPI_Isend(large.data(), large_bytes, MPI_BYTE, 0, 2, comm, &request);
    std::raise(SIGKILL);
  } else if (rank == 0) {
    MPI_Recv(first.data(), first_bytes, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE);
    const int rc = MPI_Recv(large.data(), large_bytes, MPI_BYTE, 1, 2, comm, MPI_STATUS_IGNORE);
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    std::printf("peer_killed: the survivor's receive returned %d (%s)\n", rc, text);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
