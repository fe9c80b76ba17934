// A peer that dies in the middle of device work: rank 1 sends a first
// message (which sets up the route, a handshake for ucx), then starts its
// part of a 64 MiB device transfer and dies while rank 0 waits in its own
// part. Rank 0 must not hang: its call returns an MPI error (its
// communicator returns errors) or the launcher ends the job. Run by
// ends_without_hang.sh, which fails only on a timeout.
//
//   peer_killed [--how kill|abort|mpi_abort] [--where send|recv|collective]
//
// --how: SIGKILL (default), abort(), or MPI_Abort called while rank 1's own
// device operation is pending. --where: rank 1 dies after posting a device
// send that rank 0 receives (default), after posting a device receive that
// rank 0 sends to, or instead of joining a device MPI_Allreduce rank 0 is in.
#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

std::string option(int argc, char** argv, const char* flag, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
  }
  return fallback;
}

void die(const std::string& how, MPI_Comm comm) {
  std::fflush(stdout);
  if (how == "abort") std::abort();
  if (how == "mpi_abort") MPI_Abort(comm, 3);
  std::raise(SIGKILL);
}

void report(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  std::printf("peer_killed: the survivor's %s returned %d (%s)\n", what, rc, text);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string how = option(argc, argv, "--how", "kill");
  const std::string where = option(argc, argv, "--where", "send");
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
    MPI_Request request = MPI_REQUEST_NULL;
    if (where == "send") MPI_Isend(large.data(), large_bytes, MPI_BYTE, 0, 2, comm, &request);
    if (where == "recv") MPI_Irecv(large.data(), large_bytes, MPI_BYTE, 0, 2, comm, &request);
    die(how, comm);
  } else if (rank == 0) {
    MPI_Recv(first.data(), first_bytes, MPI_BYTE, 1, 1, comm, MPI_STATUS_IGNORE);
    if (where == "send")
      report("receive", MPI_Recv(large.data(), large_bytes, MPI_BYTE, 1, 2, comm, MPI_STATUS_IGNORE));
    if (where == "recv") report("send", MPI_Send(large.data(), large_bytes, MPI_BYTE, 1, 2, comm));
    if (where == "collective") {
      report("allreduce", MPI_Allreduce(MPI_IN_PLACE, large.data(), large_bytes / 4, MPI_FLOAT, MPI_SUM, comm));
    }
  }
  MPI_Finalize();
  return 0;
}
