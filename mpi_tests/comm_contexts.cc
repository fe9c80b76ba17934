// Communicator contexts: cumpi's own state of a communicator is made once,
// when the engine first needs it, and released when the program frees the
// communicator. Device messages on duplicated, split (ranks reversed) and
// inter-communicators reach the rank the program addressed, every byte
// checked; a communicator freed while device operations on it are pending
// lets them complete (MPI's rule); freeing every communicator made brings
// cumpi's count of live contexts back to where it was.
//
//   comm_contexts [--cycles N] [--bytes B]
#include <mpi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

// cumpi's struct cumpi_comm_context_info, looked up at run time: the test
// links MPI only.
struct ContextInfo {
  std::size_t made, released;
};
using ContextInfoFunction = int (*)(ContextInfo*);

ContextInfo context_info() {
  static auto* function = reinterpret_cast<ContextInfoFunction>(dlsym(RTLD_DEFAULT, "cumpi_get_comm_context_info"));
  ContextInfo info{0, 0};
  if (function != nullptr) function(&info);
  return info;
}

long live(const ContextInfo& info) { return static_cast<long>(info.made) - static_cast<long>(info.released); }

// Every rank sends `bytes` of device memory to (rank + 1) % size of comm and
// receives from (rank - 1 + size) % size, patterns seeded by the sender's
// rank in comm: a message reaching another rank than the one addressed, or
// a translation through the wrong group, shows as the wrong pattern.
void ring(MPI_Comm comm, std::size_t bytes, unsigned seed, const char* what) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Buffer out(Memory::device, bytes);
  Buffer in(Memory::device, bytes);
  out.fill(pattern(seed + static_cast<unsigned>(rank), bytes));
  in.fill(std::vector<unsigned char>(bytes, 0));
  const int to = (rank + 1) % size;
  const int from = (rank - 1 + size) % size;
  MPI_Sendrecv(out.data(), static_cast<int>(bytes), MPI_BYTE, to, 7, in.data(), static_cast<int>(bytes), MPI_BYTE,
               from, 7, comm, MPI_STATUS_IGNORE);
  CHECK_BYTES(pattern(seed + static_cast<unsigned>(from), bytes), in.contents(), what);
}

// Duplicates and splits with the ranks in reverse order, each used for
// device messages several times (its context made once), then freed.
void cycles_of_communicators(int cycles, std::size_t bytes) {
  const ContextInfo before = context_info();
  int world_rank = 0;
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (int cycle = 0; cycle < cycles; ++cycle) {
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm reversed = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
    for (int round = 0; round < 3; ++round) {
      ring(dup, bytes, 100u * static_cast<unsigned>(cycle) + static_cast<unsigned>(round), "duplicate");
      ring(reversed, bytes, 100u * static_cast<unsigned>(cycle) + 50u + static_cast<unsigned>(round), "reversed split");
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&reversed);
  }
  const ContextInfo after = context_info();
  CHECK_EQ(live(after), live(before), "contexts live after freeing every communicator made");
  // Each communicator's context is made at most once, however many
  // messages use it (senders make one; receivers need none).
  CHECK_TRUE(after.made - before.made <= static_cast<std::size_t>(2 * cycles), "made %zu for %d communicators",
             after.made - before.made, 2 * cycles);
  CHECK_TRUE(after.made > before.made, "device sends on new communicators made contexts");
}

// MPI_Comm_free with device sends and receives pending on the communicator:
// they complete normally, every byte delivered.
void free_with_operations_pending(std::size_t bytes) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  Buffer out(Memory::device, bytes);
  Buffer in(Memory::device, bytes);
  out.fill(pattern(900u + static_cast<unsigned>(rank), bytes));
  in.fill(std::vector<unsigned char>(bytes, 0));
  const int from = (rank - 1 + size) % size;
  MPI_Request requests[2];
  MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, from, 3, dup, &requests[0]);
  MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, (rank + 1) % size, 3, dup, &requests[1]);
  CHECK_EQ(MPI_Comm_free(&dup), MPI_SUCCESS, "MPI_Comm_free with device operations pending");
  CHECK_EQ(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS, "operations pending on a freed communicator");
  CHECK_BYTES(pattern(900u + static_cast<unsigned>(from), bytes), in.contents(), "received on a freed communicator");
}

// Two groups (even and odd world ranks) joined by an inter-communicator:
// rank r of one group sends to rank r of the other, addressed in the remote
// group's numbering.
void inter_communicator(std::size_t bytes) {
  int world_rank = 0;
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size < 2) return;
  const int color = world_rank % 2;
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm inter = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 11, &inter);
  int rank = 0;
  int remote_size = 0;
  MPI_Comm_rank(inter, &rank);
  MPI_Comm_remote_size(inter, &remote_size);
  if (rank < remote_size) {
    Buffer out(Memory::device, bytes);
    Buffer in(Memory::device, bytes);
    out.fill(pattern(700u + static_cast<unsigned>(world_rank), bytes));
    in.fill(std::vector<unsigned char>(bytes, 0));
    const int partner_world = color == 0 ? world_rank + 1 : world_rank - 1;  // rank r of the other group
    MPI_Sendrecv(out.data(), static_cast<int>(bytes), MPI_BYTE, rank, 5, in.data(), static_cast<int>(bytes),
                 MPI_BYTE, rank, 5, inter, MPI_STATUS_IGNORE);
    CHECK_BYTES(pattern(700u + static_cast<unsigned>(partner_world), bytes), in.contents(), "inter-communicator");
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

}  // namespace

int main(int argc, char** argv) {
  int cycles = 50;
  std::size_t bytes = 65536;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--cycles") cycles = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--bytes") bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  CHECK_TRUE(dlsym(RTLD_DEFAULT, "cumpi_get_comm_context_info") != nullptr, "runs under cumpi");
  Checks::instance().set_context("cycles");
  cycles_of_communicators(cycles, bytes);
  Checks::instance().set_context("free with operations pending");
  free_with_operations_pending(bytes);
  Checks::instance().set_context("inter-communicator");
  inter_communicator(bytes);
  const int rc = Checks::instance().finish();
  MPI_Finalize();
  return rc;
}
