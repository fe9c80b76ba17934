// A device buffer freed before an MPI call names it: the call fails with
// MPI_ERR_BUFFER through the communicator's handler (MPI_ERRORS_RETURN on a
// duplicate of MPI_COMM_WORLD), where the MPI library alone would fault.
// Each buffer is used in one exchange first, as a program would, so cumpi
// has seen it (docs/design.md says what cannot be told). Sends, receives,
// nonblocking forms and a collective; afterwards a fresh device buffer still
// works. Rank 0 and rank 1 both run every case on their own (no message is
// ever sent from a freed buffer to the other rank).
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

constexpr std::size_t kBytes = 4096;

// A device buffer used in one exchange with the peer, then freed.
void* freed_buffer(int peer, MPI_Comm comm) {
  auto buffer = std::make_unique<Buffer>(Memory::device, kBytes);
  buffer->fill(pattern(1, kBytes));
  Buffer other(Memory::device, kBytes);
  MPI_Sendrecv(buffer->data(), static_cast<int>(kBytes), MPI_BYTE, peer, 5, other.data(), static_cast<int>(kBytes),
               MPI_BYTE, peer, 5, comm, MPI_STATUS_IGNORE);
  void* address = buffer->data();
  buffer.reset();
  return address;
}

void check_buffer_error(int rc, const char* what) {
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_BUFFER, "%s on a freed device buffer", what);
}

}  // namespace

int main(int argc, char** argv) {
  parse_options(argc, argv);
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = 1 - rank;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  void* gone = freed_buffer(peer, comm);
  // Refused before anything goes: no message of these cases reaches the peer.
  Checks::instance().set_context("MPI_Send");
  check_buffer_error(MPI_Send(gone, static_cast<int>(kBytes), MPI_BYTE, peer, 7, comm), "MPI_Send");
  Checks::instance().set_context("MPI_Recv");
  check_buffer_error(MPI_Recv(gone, static_cast<int>(kBytes), MPI_BYTE, peer, 8, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  Checks::instance().set_context("MPI_Isend");
  MPI_Request request = MPI_REQUEST_NULL;
  check_buffer_error(MPI_Isend(gone, static_cast<int>(kBytes), MPI_BYTE, peer, 9, comm, &request), "MPI_Isend");
  Checks::instance().set_context("MPI_Irecv");
  check_buffer_error(MPI_Irecv(gone, static_cast<int>(kBytes), MPI_BYTE, peer, 10, comm, &request), "MPI_Irecv");
  Checks::instance().set_context("MPI_Allreduce");
  check_buffer_error(MPI_Allreduce(MPI_IN_PLACE, gone, static_cast<int>(kBytes / 4), MPI_INT, MPI_SUM, comm),
                     "MPI_Allreduce");
  // A device buffer made now still goes, every byte.
  Checks::instance().set_context("a fresh buffer");
  Buffer out(Memory::device, kBytes);
  Buffer in(Memory::device, kBytes);
  out.fill(pattern(static_cast<unsigned>(rank), kBytes));
  const int rc = MPI_Sendrecv(out.data(), static_cast<int>(kBytes), MPI_BYTE, peer, 11, in.data(),
                              static_cast<int>(kBytes), MPI_BYTE, peer, 11, comm, MPI_STATUS_IGNORE);
  CHECK_EQ(rc, MPI_SUCCESS, "MPI_Sendrecv of fresh device buffers");
  CHECK_BYTES(pattern(static_cast<unsigned>(peer), kBytes), in.contents(), "the peer's bytes");
  MPI_Comm_free(&comm);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
