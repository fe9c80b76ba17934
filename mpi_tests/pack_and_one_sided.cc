// MPI_Pack/Unpack and their external32 forms on every mix of host and
// device buffers, against the same call on host buffers (MPI's own packing
// is the oracle): every byte of the packed buffer and of the unpacked one,
// holes included. Then one-sided communication: host windows and transfers
// work as in plain MPI; a window over device memory (offered by one rank
// only) and transfers from or to device buffers fail at once with an MPI
// error, on every rank that must see it, without a hang.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

int g_rank = 0;
int g_size = 0;

// 40 blocks of 3 ints every 5 ints: holes that unpacking must leave alone.
MPI_Datatype strided_ints() {
  MPI_Datatype type;
  MPI_Type_vector(40, 3, 5, MPI_INT, &type);
  MPI_Type_commit(&type);
  return type;
}

constexpr int kCount = 2;                     // elements of the strided type
constexpr std::size_t kTypedBytes = 400 * 4;  // two elements of extent 198 ints, and spare ints after
constexpr std::size_t kPackedRoom = 4096;
constexpr int kStart = 24;  // position packing starts at

// What MPI packs from / unpacks into host buffers: the oracle.
struct Oracle {
  std::vector<unsigned char> packed;    // the whole packed buffer after packing at kStart
  int end = 0;                          // position after packing
  std::vector<unsigned char> unpacked;  // the typed buffer after unpacking
};

Oracle host_oracle(MPI_Datatype type, bool external) {
  Oracle oracle;
  std::vector<unsigned char> typed = pattern(1, kTypedBytes);
  oracle.packed = pattern(2, kPackedRoom);
  if (external) {
    MPI_Aint position = kStart;
    MPI_Pack_external("external32", typed.data(), kCount, type, oracle.packed.data(), kPackedRoom, &position);
    oracle.end = static_cast<int>(position);
  } else {
    int position = kStart;
    MPI_Pack(typed.data(), kCount, type, oracle.packed.data(), kPackedRoom, &position, MPI_COMM_SELF);
    oracle.end = position;
  }
  oracle.unpacked = pattern(3, kTypedBytes);
  if (external) {
    MPI_Aint position = kStart;
    MPI_Unpack_external("external32", oracle.packed.data(), kPackedRoom, &position, oracle.unpacked.data(), kCount,
                        type);
  } else {
    int position = kStart;
    MPI_Unpack(oracle.packed.data(), kPackedRoom, &position, oracle.unpacked.data(), kCount, type, MPI_COMM_SELF);
  }
  return oracle;
}

void pack_pair(Memory typed_memory, Memory packed_memory, bool external) {
  Checks::instance().set_context(format("%s typed %s, packed %s", external ? "Pack_external" : "Pack",
                                        memory_name(typed_memory), memory_name(packed_memory)));
  MPI_Datatype type = strided_ints();
  const Oracle oracle = host_oracle(type, external);
  Buffer typed(typed_memory, kTypedBytes);
  Buffer packed(packed_memory, kPackedRoom);
  typed.fill(pattern(1, kTypedBytes));
  packed.fill(pattern(2, kPackedRoom));
  int end = -1;
  if (external) {
    MPI_Aint position = kStart;
    CHECK_EQ(MPI_Pack_external("external32", typed.data(), kCount, type, packed.data(), kPackedRoom, &position),
             MPI_SUCCESS, "pack result");
    end = static_cast<int>(position);
  } else {
    int position = kStart;
    CHECK_EQ(MPI_Pack(typed.data(), kCount, type, packed.data(), kPackedRoom, &position, MPI_COMM_SELF), MPI_SUCCESS,
             "pack result");
    end = position;
  }
  CHECK_EQ(end, oracle.end, "position after packing");
  CHECK_BYTES(oracle.packed, packed.contents(), "the packed buffer, before and after the packed bytes too");
  CHECK_BYTES(pattern(1, kTypedBytes), typed.contents(), "the typed buffer is only read");

  typed.fill(pattern(3, kTypedBytes));
  packed.fill(oracle.packed);
  if (external) {
    MPI_Aint position = kStart;
    CHECK_EQ(MPI_Unpack_external("external32", packed.data(), kPackedRoom, &position, typed.data(), kCount, type),
             MPI_SUCCESS, "unpack result");
    end = static_cast<int>(position);
  } else {
    int position = kStart;
    CHECK_EQ(MPI_Unpack(packed.data(), kPackedRoom, &position, typed.data(), kCount, type, MPI_COMM_SELF), MPI_SUCCESS,
             "unpack result");
    end = position;
  }
  CHECK_EQ(end, oracle.end, "position after unpacking");
  CHECK_BYTES(oracle.unpacked, typed.contents(), "the unpacked buffer, holes untouched");
  MPI_Type_free(&type);
}

int error_class_of(int rc) {
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  return error_class;
}

// A window over host memory of this rank's, MPI_Win_create where this MPI
// offers it over the communicator's transports, MPI_Win_allocate otherwise
// (Open MPI 4.1 with only shared memory and self has no component for
// MPI_Win_create on some builds: MPI_ERR_WIN, plain MPI alike; cumpi's own
// refusals are MPI_ERR_BASE).
int* host_window_memory(MPI_Comm comm, int count, std::vector<int>& storage, MPI_Win* win) {
  storage.assign(count, -1);
  const int rc = MPI_Win_create(storage.data(), count * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, win);
  if (rc == MPI_SUCCESS) return storage.data();
  CHECK_EQ(error_class_of(rc), MPI_ERR_WIN, "MPI_Win_create over host memory succeeds or is MPI's own refusal");
  if (g_rank == 0) std::printf("note: this MPI refuses MPI_Win_create here; host windows by MPI_Win_allocate\n");
  int* base = nullptr;
  CHECK_EQ(MPI_Win_allocate(count * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &base, win), MPI_SUCCESS,
           "MPI_Win_allocate");
  std::fill(base, base + count, -1);
  return base;
}

// Host windows: a Put and a Get between the two ranks, as in plain MPI.
void host_window(MPI_Comm comm) {
  Checks::instance().set_context("one-sided on host memory");
  std::vector<int> storage;
  MPI_Win win;
  int* exposed = host_window_memory(comm, 64, storage, &win);
  std::vector<int> mine(16);
  for (int j = 0; j < 16; ++j) mine[j] = g_rank * 1000 + j;
  const int peer = (g_rank + 1) % g_size;
  MPI_Win_fence(0, win);
  MPI_Put(mine.data(), 16, MPI_INT, peer, 8, 16, MPI_INT, win);
  MPI_Win_fence(0, win);
  std::vector<int> fetched(16, 0);
  MPI_Get(fetched.data(), 16, MPI_INT, peer, 8, 16, MPI_INT, win);
  MPI_Win_fence(0, win);
  const int from = (g_rank - 1 + g_size) % g_size;
  bool ok = true;
  for (int j = 0; j < 16; ++j) ok = ok && exposed[8 + j] == from * 1000 + j && fetched[j] == mine[j];
  CHECK_TRUE(ok, "put and got back");
  MPI_Win_free(&win);
}

// Device memory: refused at once, collectively for the window.
void device_window(MPI_Comm comm) {
  Checks::instance().set_context("a window over device memory on rank 1 only");
  Buffer device(Memory::device, 4096);
  std::vector<int> local(1024, 0);
  void* base = g_rank == 1 ? device.data() : static_cast<void*>(local.data());
  MPI_Win win = MPI_WIN_NULL;
  const int rc = MPI_Win_create(base, 4096, 1, MPI_INFO_NULL, comm, &win);
  CHECK_EQ(error_class_of(rc), MPI_ERR_BASE, "every rank's MPI_Win_create fails");
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);

  Checks::instance().set_context("one-sided transfers from or to device memory");
  std::vector<int> storage;
  int* host = host_window_memory(comm, 1024, storage, &win);
  std::fill(host, host + 1024, 0);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  const int peer = (g_rank + 1) % g_size;
  MPI_Win_fence(0, win);
  CHECK_EQ(error_class_of(MPI_Put(device.data(), 16, MPI_INT, peer, 0, 16, MPI_INT, win)), MPI_ERR_BUFFER,
           "MPI_Put from device memory");
  CHECK_EQ(error_class_of(MPI_Get(device.data(), 16, MPI_INT, peer, 0, 16, MPI_INT, win)), MPI_ERR_BUFFER,
           "MPI_Get into device memory");
  CHECK_EQ(error_class_of(MPI_Accumulate(device.data(), 16, MPI_INT, peer, 0, 16, MPI_INT, MPI_SUM, win)),
           MPI_ERR_BUFFER, "MPI_Accumulate from device memory");
  int one = 1;
  CHECK_EQ(error_class_of(MPI_Fetch_and_op(&one, device.data(), MPI_INT, peer, 0, MPI_SUM, win)), MPI_ERR_BUFFER,
           "MPI_Fetch_and_op into device memory");
  MPI_Win_fence(0, win);
  CHECK_TRUE(host[0] == 0, "nothing reached the target");
  MPI_Win_free(&win);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (options.uses_device()) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm returning;
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  for (bool external : {false, true}) {
    for (Memory typed : options.memories) {
      for (Memory packed : options.memories) pack_pair(typed, packed, external);
    }
  }
  host_window(returning);
  if (options.uses_device()) device_window(returning);
  MPI_Comm_free(&returning);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
