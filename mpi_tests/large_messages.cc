// Messages over 2 GiB: past every 32-bit byte count and offset. An element
// of 1 MiB + 8 bytes (a contiguous derived type) sent 2050 times is
// 2,149,597,200 bytes; so is a count of MPI_BYTE over INT_MAX through
// MPI_Send_c/MPI_Recv_c where the MPI has the MPI-4 large-count calls.
// Blocking and nonblocking, and a Bcast; rank 0 sends, rank 1 receives,
// every byte checked (each 64 MiB stretch has a pattern of its own, so a
// wrapped offset shows), 64 bytes past the end untouched, and the status's
// count in elements and in bytes.
//
//   large_messages [--memory host|device|both]
//
// Host memory only (--memory host) is plain MPI's run, the oracle. A rank
// that lacks the memory (two buffers of the message's size, one on each
// rank) says so and the test is skipped (exit 77).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

constexpr std::size_t kElementBytes = (std::size_t{1} << 20) + 8;
constexpr int kElements = 2050;
constexpr std::size_t kMessageBytes = kElementBytes * kElements;
static_assert(kMessageBytes > std::size_t{INT_MAX}, "the message must pass 2 GiB");
constexpr std::size_t kStretch = std::size_t{64} << 20;  // bytes uploaded or checked at once
constexpr std::size_t kGuard = 64;                       // bytes past the message that stay untouched
constexpr unsigned char kGuardByte = 0xA5;
constexpr int kSkipped = 77;

// One pattern, changed in every stretch by a byte of its own: a byte written
// at an offset that wrapped at 2^31 or 2^32 differs from the one expected
// there (0x3B is odd, so no two of the 33 stretches share a byte). Written
// into `stretch`, whose storage is reused: a fresh 64 MiB vector is fresh
// pages, and faulting 2 GiB in costs seconds on a virtual machine.
void stretch_pattern(const std::vector<unsigned char>& base, std::size_t offset, std::size_t bytes,
                     std::vector<unsigned char>* stretch) {
  const auto mark = static_cast<unsigned char>((offset / kStretch) * 0x3B);
  stretch->resize(bytes);
  for (std::size_t i = 0; i < bytes; ++i) (*stretch)[i] = base[i] ^ mark;
}

void fill_message(Buffer& buffer, unsigned seed) {
  const std::vector<unsigned char> base = pattern(seed, kStretch);
  std::vector<unsigned char> stretch;
  for (std::size_t offset = 0; offset < kMessageBytes; offset += kStretch) {
    const std::size_t bytes = std::min(kStretch, kMessageBytes - offset);
    stretch_pattern(base, offset, bytes, &stretch);
    buffer.upload(stretch.data(), bytes, offset);
  }
}

void fill_guard(Buffer& buffer) {
  const std::vector<unsigned char> guard(kGuard, kGuardByte);
  buffer.upload(guard.data(), kGuard, kMessageBytes);
}

void check_message(const Buffer& buffer, unsigned seed, const std::string& what) {
  const std::vector<unsigned char> base = pattern(seed, kStretch);
  std::vector<unsigned char> actual;
  std::vector<unsigned char> expected;
  for (std::size_t offset = 0; offset < kMessageBytes; offset += kStretch) {
    const std::size_t bytes = std::min(kStretch, kMessageBytes - offset);
    actual.resize(bytes);
    buffer.download(actual.data(), bytes, offset);
    stretch_pattern(base, offset, bytes, &expected);
    const std::string where = format("%s, bytes from %zu", what.c_str(), offset);
    if (!CHECK_BYTES(expected, actual, where.c_str())) {
      return;  // one report per message
    }
  }
  actual.resize(kGuard);
  buffer.download(actual.data(), kGuard, kMessageBytes);
  CHECK_BYTES(std::vector<unsigned char>(kGuard, kGuardByte), actual, (what + ", the guard past the end").c_str());
}

// The count in elements of `element` (MPI_UNDEFINED where it passes an int,
// as MPI says), then in bytes.
void check_status(const MPI_Status& status, MPI_Datatype element, const std::string& what) {
  int element_bytes = 0;
  MPI_Type_size(element, &element_bytes);
  const std::size_t elements = kMessageBytes / static_cast<std::size_t>(element_bytes);
  int count = -1;
  MPI_Get_count(&status, element, &count);
  CHECK_EQ(count, elements > INT_MAX ? MPI_UNDEFINED : static_cast<int>(elements), "%s: MPI_Get_count",
           what.c_str());
  MPI_Count bytes = -1;
  MPI_Get_elements_x(&status, MPI_BYTE, &bytes);
  CHECK_EQ(bytes, static_cast<long long>(kMessageBytes), "%s: MPI_Get_elements_x in bytes", what.c_str());
  CHECK_EQ(status.MPI_SOURCE, 0, "%s: source", what.c_str());
}

// Memory this host can still give, in bytes (MemAvailable).
std::size_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// One way of moving the message: the sender's and the receiver's part.
struct Exchange {
  const char* name;
  bool has_status;
  bool counts_bytes;  // MPI_BYTE over INT_MAX (the _c calls), else the element type
  std::function<int(void*, MPI_Datatype, MPI_Comm)> send;
  std::function<int(void*, MPI_Datatype, MPI_Comm, MPI_Status*)> receive;
};

std::vector<Exchange> exchanges() {
  std::vector<Exchange> list;
  list.push_back({"Send/Recv", true, false,
                  [](void* buf, MPI_Datatype element, MPI_Comm comm) {
                    return MPI_Send(buf, kElements, element, 1, 1, comm);
                  },
                  [](void* buf, MPI_Datatype element, MPI_Comm comm, MPI_Status* status) {
                    return MPI_Recv(buf, kElements, element, 0, 1, comm, status);
                  }});
  list.push_back({"Isend/Irecv+Wait", true, false,
                  [](void* buf, MPI_Datatype element, MPI_Comm comm) {
                    MPI_Request request = MPI_REQUEST_NULL;
                    const int rc = MPI_Isend(buf, kElements, element, 1, 2, comm, &request);
                    return rc == MPI_SUCCESS ? MPI_Wait(&request, MPI_STATUS_IGNORE) : rc;
                  },
                  [](void* buf, MPI_Datatype element, MPI_Comm comm, MPI_Status* status) {
                    MPI_Request request = MPI_REQUEST_NULL;
                    const int rc = MPI_Irecv(buf, kElements, element, 0, 2, comm, &request);
                    return rc == MPI_SUCCESS ? MPI_Wait(&request, status) : rc;
                  }});
  list.push_back({"Bcast", false, false,
                  [](void* buf, MPI_Datatype element, MPI_Comm comm) {
                    return MPI_Bcast(buf, kElements, element, 0, comm);
                  },
                  [](void* buf, MPI_Datatype element, MPI_Comm comm, MPI_Status*) {
                    return MPI_Bcast(buf, kElements, element, 0, comm);
                  }});
#if MPI_VERSION >= 4
  list.push_back({"Send_c/Recv_c of MPI_BYTE", true, true,
                  [](void* buf, MPI_Datatype, MPI_Comm comm) {
                    return MPI_Send_c(buf, static_cast<MPI_Count>(kMessageBytes), MPI_BYTE, 1, 3, comm);
                  },
                  [](void* buf, MPI_Datatype, MPI_Comm comm, MPI_Status* status) {
                    return MPI_Recv_c(buf, static_cast<MPI_Count>(kMessageBytes), MPI_BYTE, 0, 3, comm, status);
                  }});
  list.push_back({"Isend_c/Irecv_c of MPI_BYTE", true, true,
                  [](void* buf, MPI_Datatype, MPI_Comm comm) {
                    MPI_Request request = MPI_REQUEST_NULL;
                    const int rc = MPI_Isend_c(buf, static_cast<MPI_Count>(kMessageBytes), MPI_BYTE, 1, 4, comm,
                                               &request);
                    return rc == MPI_SUCCESS ? MPI_Wait(&request, MPI_STATUS_IGNORE) : rc;
                  },
                  [](void* buf, MPI_Datatype, MPI_Comm comm, MPI_Status* status) {
                    MPI_Request request = MPI_REQUEST_NULL;
                    const int rc = MPI_Irecv_c(buf, static_cast<MPI_Count>(kMessageBytes), MPI_BYTE, 0, 4, comm,
                                               &request);
                    return rc == MPI_SUCCESS ? MPI_Wait(&request, status) : rc;
                  }});
#endif
  return list;
}

// A buffer of each memory on every rank, made once: first touching 2 GiB
// costs seconds on a virtual machine, each time.
struct Buffers {
  std::vector<std::unique_ptr<Buffer>> of_memory;  // indexed by Memory
  Buffer& operator[](Memory memory) { return *of_memory[static_cast<std::size_t>(memory)]; }
};

Buffers make_buffers(const std::vector<Memory>& memories) {
  Buffers buffers;
  buffers.of_memory.resize(2);
  for (Memory memory : memories) {
    buffers.of_memory[static_cast<std::size_t>(memory)] = std::make_unique<Buffer>(memory, kMessageBytes + kGuard);
  }
  return buffers;
}

void run_exchange(const Exchange& exchange, Memory from, Memory to, int rank, Buffers& buffers, MPI_Datatype element,
                  MPI_Comm comm, unsigned seed) {
  const std::string what = format("%s %s->%s", exchange.name, memory_name(from), memory_name(to));
  Checks::instance().set_context(what);
  if (rank == 0) {
    Buffer& out = buffers[from];
    fill_message(out, seed);
    MPI_Barrier(comm);
    CHECK_EQ(exchange.send(out.data(), element, comm), MPI_SUCCESS, "%s: the send", what.c_str());
  } else {
    Buffer& in = buffers[to];
    const double started = MPI_Wtime();
    fill_message(in, seed + 1000);  // the last message's bytes gone
    fill_guard(in);
    MPI_Barrier(comm);
    const double filled = MPI_Wtime();
    MPI_Status status{};
    CHECK_EQ(exchange.receive(in.data(), element, comm, &status), MPI_SUCCESS, "%s: the receive", what.c_str());
    const double received = MPI_Wtime();
    if (exchange.has_status) {
      check_status(status, exchange.counts_bytes ? MPI_BYTE : element, what);
    }
    check_message(in, seed, what);
    std::printf("large_messages: %s: filled in %.1f s, moved in %.1f s, checked in %.1f s\n", what.c_str(),
                filled - started, received - filled, MPI_Wtime() - received);
  }
  MPI_Barrier(comm);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (options.uses_device()) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank of a host holds a message in each memory (emulated device
  // memory is host memory), cumpi's staging of one, and a few stretches.
  const std::size_t needed = static_cast<std::size_t>(size) * ((options.memories.size() + 1) * kMessageBytes + 4 * kStretch);
  int enough = available_memory() >= needed ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (size != 2 || enough == 0) {
    if (rank == 0) {
      std::printf("large_messages: SKIPPED: needs 2 ranks (has %d) and %.1f GiB available (has %.1f)\n", size,
                  static_cast<double>(needed) / (1 << 30), static_cast<double>(available_memory()) / (1 << 30));
    }
    MPI_Finalize();
    return kSkipped;
  }
  MPI_Datatype element;
  MPI_Type_contiguous(static_cast<int>(kElementBytes), MPI_BYTE, &element);
  MPI_Type_commit(&element);
  Buffers buffers = make_buffers(options.memories);
  unsigned seed = 1;
  // Every memory pair for the first way; the others from the last memory
  // named (device, unless host only) to itself, to keep the run short.
  const Memory last = options.memories.back();
  bool first = true;
  for (const Exchange& exchange : exchanges()) {
    for (Memory from : options.memories) {
      for (Memory to : options.memories) {
        if (first || (from == last && to == last)) {
          run_exchange(exchange, from, to, rank, buffers, element, MPI_COMM_WORLD, seed++);
        }
      }
    }
    first = false;
  }
  MPI_Type_free(&element);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
