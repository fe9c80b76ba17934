// Thread levels. cumpi offers MPI_THREAD_SERIALIZED at most: a program that
// asks for MPI_THREAD_MULTIPLE must be told so by `provided` (under plain
// MPI it may get MPI_THREAD_MULTIPLE). Then what SERIALIZED allows, exercised: four
// threads per rank taking turns under one lock, each with its own tag and
// its own communicator, host and device buffers, blocking and nonblocking
// calls, requests started on one thread and completed on another, probes
// with wildcards; every byte checked.
//
//   thread_levels [--memory host|device|both] [--expect-clamp 0|1]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 6;

int g_rank = 0;
std::mutex g_mpi;                                                // SERIALIZED: one MPI call at a time
std::vector<MPI_Request> g_handoff(kThreads, MPI_REQUEST_NULL);  // started by thread t, completed by t+1

std::size_t size_of_round(int round) { return round % 2 == 0 ? 64 : 96 * 1024; }

template <typename Call>
int serialized(Call call) {
  std::lock_guard<std::mutex> lock(g_mpi);
  return call();
}

// Thread t of rank 0 sends round r to rank 1's thread t, alternately from
// host and device memory; rank 1 receives by Recv, by Irecv completed by
// the next thread, and by Probe+Recv with a wildcard source.
void sender(int t, MPI_Comm comm, const std::vector<Memory>& memories) {
  for (int round = 0; round < kRounds; ++round) {
    const Memory memory = memories[static_cast<std::size_t>(round) % memories.size()];
    const std::size_t bytes = size_of_round(round);
    Buffer out(memory, bytes);
    out.fill(pattern(static_cast<unsigned>(t * 100 + round), bytes));
    MPI_Request request = MPI_REQUEST_NULL;
    serialized([&] { return MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, 1, round, comm, &request); });
    int done = 0;
    while (done == 0) {
      serialized([&] { return MPI_Test(&request, &done, MPI_STATUS_IGNORE); });
      std::this_thread::yield();
    }
  }
}

void receiver(int t, MPI_Comm comm, const std::vector<Memory>& memories) {
  for (int round = 0; round < kRounds; ++round) {
    const Memory memory = memories[static_cast<std::size_t>(round + 1) % memories.size()];
    const std::size_t bytes = size_of_round(round);
    Buffer in(memory, bytes + 64);
    in.fill(std::vector<unsigned char>(bytes + 64, 0x6d));
    MPI_Status status{};
    switch (round % 3) {
      case 0:
        serialized([&] { return MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, 0, round, comm, &status); });
        break;
      case 1: {
        MPI_Status probed{};
        int found = 0;
        while (found == 0) {
          serialized([&] { return MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &found, &probed); });
          std::this_thread::yield();
        }
        CHECK_EQ(probed.MPI_TAG, round, "thread %d probed its own round's message", t);
        serialized([&] {
          return MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, comm,
                          &status);
        });
        break;
      }
      default: {
        MPI_Request request = MPI_REQUEST_NULL;
        serialized([&] { return MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, 0, round, comm, &request); });
        int done = 0;
        while (done == 0) {
          serialized([&] { return MPI_Test(&request, &done, &status); });
          std::this_thread::yield();
        }
        break;
      }
    }
    int received = -1;
    MPI_Get_count(&status, MPI_BYTE, &received);
    CHECK_EQ(received, static_cast<int>(bytes), "thread %d round %d bytes", t, round);
    std::vector<unsigned char> expected = pattern(static_cast<unsigned>(t * 100 + round), bytes);
    expected.resize(bytes + 64, 0x6d);
    CHECK_BYTES(expected, in.contents(), "a thread's message, nothing past it");
  }
}

// A request started on one thread and completed on another (SERIALIZED
// allows it): each thread posts a receive into a device or host buffer and
// hands it on; the next thread waits for it.
void handoff(int t, MPI_Comm comm, Memory memory, std::vector<std::unique_ptr<Buffer>>& buffers) {
  const std::size_t bytes = 32 * 1024;
  if (g_rank == 1) {
    buffers[static_cast<std::size_t>(t)] = std::make_unique<Buffer>(memory, bytes);
    serialized([&] {
      return MPI_Irecv(buffers[static_cast<std::size_t>(t)]->data(), static_cast<int>(bytes), MPI_BYTE, 0, 500 + t,
                       comm, &g_handoff[static_cast<std::size_t>(t)]);
    });
  } else {
    Buffer out(memory, bytes);
    out.fill(pattern(static_cast<unsigned>(900 + t), bytes));
    serialized([&] { return MPI_Send(out.data(), static_cast<int>(bytes), MPI_BYTE, 1, 500 + t, comm); });
  }
}

void finish_handoff(int t, std::vector<std::unique_ptr<Buffer>>& buffers) {
  if (g_rank != 1) return;
  const int from = (t + kThreads - 1) % kThreads;
  MPI_Status status{};
  serialized([&] { return MPI_Wait(&g_handoff[static_cast<std::size_t>(from)], &status); });
  CHECK_EQ(status.MPI_TAG, 500 + from, "thread %d completed thread %d's request", t, from);
  CHECK_BYTES(pattern(static_cast<unsigned>(900 + from), 32 * 1024),
              buffers[static_cast<std::size_t>(from)]->contents(), "a request completed on another thread");
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  bool expect_clamp = false;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--expect-clamp") expect_clamp = std::string(argv[i + 1]) != "0";
  }
  if (options.uses_device()) init_device_before_mpi();
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  Checks::instance().set_context("thread level");
  if (expect_clamp) CHECK_EQ(provided, MPI_THREAD_SERIALIZED, "cumpi provides MPI_THREAD_SERIALIZED");
  int query = MPI_THREAD_SINGLE;
  MPI_Query_thread(&query);
  CHECK_EQ(query, provided, "MPI_Query_thread says what MPI_Init_thread provided");
  if (provided < MPI_THREAD_SERIALIZED) {
    std::printf("the MPI gives only thread level %d: nothing more to test\n", provided);
    const int result = Checks::instance().finish();
    MPI_Finalize();
    return result;
  }
  std::vector<MPI_Comm> comms(kThreads);
  for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<std::unique_ptr<Buffer>> handed(kThreads);
  Checks::instance().set_context("serialized threads");
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        if (g_rank == 0) sender(t, comms[static_cast<std::size_t>(t)], options.memories);
        if (g_rank == 1) receiver(t, comms[static_cast<std::size_t>(t)], options.memories);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Checks::instance().set_context("requests handed between threads");
  {
    const Memory memory = options.memories.back();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { handoff(t, comms[static_cast<std::size_t>(t)], memory, handed); });
    }
    for (std::thread& thread : threads) thread.join();
    threads.clear();
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { finish_handoff(t, handed); });
    }
    for (std::thread& thread : threads) thread.join();
  }
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
