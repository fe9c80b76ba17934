// Truncated receives end as with plain MPI, and never leave their sender
// waiting. Rank 0 sends messages of several sizes (eager, short-envelope,
// rendezvous ones) to rank 1, whose receive is smaller; the receive runs on
// a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN. For each case:
// - the call returns MPI_ERR_TRUNCATE;
// - MPI_Get_count says what this MPI says of its own truncated host
//   messages (Open MPI: the message's size; learnt at the start);
// - the receive holds the message's first bytes, and nothing past it is
//   written;
// - the sender's MPI_Send returns (a sender left waiting for FIN hangs the
//   test, which its launcher's timeout then fails).
// Receives: MPI_Recv, MPI_Irecv+MPI_Wait, MPI_Recv_init+MPI_Start+MPI_Wait.
// The host-to-host run under plain MPI is the oracle.
//
//   truncation [--memory host|device|both] [--sizes a,b,...] [--unwatched-host-receives-below B]
//
// --unwatched-host-receives-below B leaves out host receives smaller than B
// bytes of device messages that go by a stand-in (an envelope from 256
// bytes, a short envelope's token from 8): cumpi does not watch host
// receives under 256 bytes, or under 8 with short envelopes
// (docs/design.md, limits).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/rendezvous_routes.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

MPI_Comm g_returning = MPI_COMM_NULL;
bool g_mpi_counts_whole_message = true;
constexpr std::size_t kGuard = 64;
constexpr unsigned char kUntouched = 0x5c;

enum class Kind { recv, irecv_wait, persistent };
const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::recv:
      return "Recv";
    case Kind::irecv_wait:
      return "Irecv+Wait";
    case Kind::persistent:
      return "Recv_init+Start+Wait";
  }
  return "?";
}

int receive(Kind kind, void* buffer, int count, int tag, MPI_Status* status) {
  MPI_Request request = MPI_REQUEST_NULL;
  switch (kind) {
    case Kind::recv:
      return MPI_Recv(buffer, count, MPI_BYTE, 0, tag, g_returning, status);
    case Kind::irecv_wait:
      MPI_Irecv(buffer, count, MPI_BYTE, 0, tag, g_returning, &request);
      return MPI_Wait(&request, status);
    case Kind::persistent: {
      MPI_Recv_init(buffer, count, MPI_BYTE, 0, tag, g_returning, &request);
      MPI_Start(&request);
      const int rc = MPI_Wait(&request, status);
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
      return rc;
    }
  }
  return MPI_ERR_OTHER;
}

void receive_case(Memory memory, std::size_t bytes, std::size_t room, int tag, Kind kind) {
  Buffer in(memory, room + kGuard);
  in.fill(std::vector<unsigned char>(room + kGuard, kUntouched));
  MPI_Status status{};
  const int rc = receive(kind, in.data(), static_cast<int>(room), tag, &status);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_TRUNCATE, "the call's error class");
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  CHECK_EQ(count, static_cast<long long>(g_mpi_counts_whole_message ? bytes : room),
           "MPI_Get_count of the truncated receive");
  CHECK_EQ(status.MPI_SOURCE, 0, "the status's source");
  CHECK_EQ(status.MPI_TAG, tag, "the status's tag");
  const std::vector<unsigned char> contents = in.contents();
  const std::vector<unsigned char> sent = pattern(static_cast<unsigned>(tag), bytes);
  CHECK_BYTES(std::vector<unsigned char>(sent.begin(), sent.begin() + static_cast<std::ptrdiff_t>(room)),
              std::vector<unsigned char>(contents.begin(), contents.begin() + static_cast<std::ptrdiff_t>(room)),
              "the message's first bytes");
  CHECK_BYTES(std::vector<unsigned char>(kGuard, kUntouched),
              std::vector<unsigned char>(contents.begin() + static_cast<std::ptrdiff_t>(room), contents.end()),
              "nothing written past the receive buffer");
}

void send_case(Memory memory, std::size_t bytes, int tag) {
  Buffer out(memory, bytes);
  out.fill(pattern(static_cast<unsigned>(tag), bytes));
  const int rc = MPI_Send(out.data(), static_cast<int>(bytes), MPI_BYTE, 1, tag, g_returning);
  CHECK_EQ(rc, MPI_SUCCESS, "the sender's MPI_Send");
}

// Receives smaller than the message: the fixed sizes and half the message.
std::vector<std::size_t> rooms_for(std::size_t bytes) {
  std::vector<std::size_t> rooms;
  for (std::size_t room :
       {std::size_t{4}, std::size_t{8}, std::size_t{50}, std::size_t{100}, std::size_t{280}, bytes / 2}) {
    bool seen = false;
    for (std::size_t earlier : rooms) seen = seen || earlier == room;
    if (room < bytes && !seen) rooms.push_back(room);
  }
  return rooms;
}

// What this MPI's status counts for a truncated host message: two bytes
// into one, on a duplicate of MPI_COMM_SELF.
bool mpi_counts_whole_message() {
  MPI_Comm self;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  const char message[2] = {1, 2};
  char room[1];
  MPI_Request sent;
  MPI_Status status;
  MPI_Isend(message, 2, MPI_BYTE, 0, 0, self, &sent);
  MPI_Recv(room, 1, MPI_BYTE, 0, 0, self, &status);
  MPI_Wait(&sent, MPI_STATUS_IGNORE);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  MPI_Comm_free(&self);
  return count == 2;
}

bool flag_given(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

std::size_t size_after(int argc, char** argv, const char* flag) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return std::strtoull(argv[i + 1], nullptr, 10);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  const std::size_t unwatched_below = size_after(argc, argv, "--unwatched-host-receives-below");
  if (!flag_given(argc, argv, "--sizes")) options.sizes = {16, 100, 300, 1 << 20};
  if (options.uses_device()) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_returning);
  MPI_Comm_set_errhandler(g_returning, MPI_ERRORS_RETURN);
  g_mpi_counts_whole_message = mpi_counts_whole_message();
  if (options.uses_device()) establish_rendezvous_routes(MPI_COMM_WORLD);
  int tag = 100;
  for (Memory send_memory : options.memories) {
    for (Memory recv_memory : options.memories) {
      for (std::size_t bytes : options.sizes) {
        // Open MPI 4.1's shared-memory transport writes past a truncated
        // host receive of an eager host message from 4 KiB on (plain MPI
        // too): host messages stay below that.
        if (send_memory == Memory::host && bytes >= 4096) continue;
        for (std::size_t room : rooms_for(bytes)) {
          const bool stand_in = send_memory == Memory::device && bytes >= 8;
          if (recv_memory == Memory::host && room < unwatched_below && stand_in) continue;
          for (Kind kind : {Kind::recv, Kind::irecv_wait, Kind::persistent}) {
            ++tag;
            Checks::instance().set_context(format("%s %s->%s %zu B into %zu B", kind_name(kind),
                                                  memory_name(send_memory), memory_name(recv_memory), bytes, room));
            if (rank == 0) send_case(send_memory, bytes, tag);
            if (rank == 1) receive_case(recv_memory, bytes, room, tag, kind);
          }
        }
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
  MPI_Comm_free(&g_returning);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
