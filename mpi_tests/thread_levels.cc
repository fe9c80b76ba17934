// Thread levels. cumpi provides the level the real MPI grants; a program
// that asks for MPI_THREAD_MULTIPLE gets it where the MPI does
// (--expect-multiple 1 says it must). Then, exercised, every byte checked:
//   - what SERIALIZED allows: four threads per rank taking turns under one
//     lock, each with its own tag and communicator, host and device buffers,
//     blocking and nonblocking calls, requests started on one thread and
//     completed on another, probes with wildcards;
//   - under MPI_THREAD_MULTIPLE, six threads per rank calling MPI at once,
//     both ways: blocking Send/Recv and Sendrecv, windows of Isend/Irecv
//     completed by Waitall, Probe and Iprobe with wildcards on a thread's
//     own communicator, Mprobe/Mrecv and Improbe/Imrecv on a communicator
//     all threads share, an Allreduce per thread; sizes from a short
//     envelope's to the pipeline's, host and device memory mixed.
//
//   thread_levels [--memory host|device|both] [--expect-multiple 0|1]
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
constexpr int kConcurrentThreads = 6;
constexpr int kConcurrentRounds = 9;
constexpr int kWindow = 4;
constexpr std::size_t kSlack = 64;  // bytes past each message that must stay untouched
constexpr unsigned char kUntouched = 0x6d;

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

// ---- MPI_THREAD_MULTIPLE: threads calling MPI at once ----

// What thread t of each rank uses in round r.
struct Round {
  int thread;
  int round;
  int peer;
  MPI_Comm own;     // this thread's alone
  MPI_Comm shared;  // every thread's, told apart by tags
  Memory send_memory;
  Memory receive_memory;
  std::size_t bytes;
};

std::size_t concurrent_size(int round) {
  static const std::size_t sizes[] = {64, 4096, 300 * 1024};
  return sizes[round % 3];
}

// A tag on the shared communicator that no other thread or step uses.
int shared_tag(const Round& r, int step) { return (r.thread * 100 + r.round) * 16 + step; }

// What `rank` sends in one step of one round: distinct for every message.
unsigned seed_of(const Round& r, int sender, int step) {
  return static_cast<unsigned>((((sender * kConcurrentThreads + r.thread) * kConcurrentRounds + r.round) * 16) + step);
}

std::unique_ptr<Buffer> outgoing(const Round& r, int step) {
  auto out = std::make_unique<Buffer>(r.send_memory, r.bytes);
  out->fill(pattern(seed_of(r, g_rank, step), r.bytes));
  return out;
}

std::unique_ptr<Buffer> incoming(const Round& r) {
  auto in = std::make_unique<Buffer>(r.receive_memory, r.bytes + kSlack);
  in->fill(std::vector<unsigned char>(r.bytes + kSlack, kUntouched));
  return in;
}

void check_incoming(const Round& r, int step, const Buffer& in, const MPI_Status& status, const char* what) {
  int received = -1;
  MPI_Get_count(&status, MPI_BYTE, &received);
  CHECK_EQ(received, static_cast<int>(r.bytes), "%s: thread %d round %d, bytes", what, r.thread, r.round);
  CHECK_EQ(status.MPI_SOURCE, r.peer, "%s: thread %d round %d, source", what, r.thread, r.round);
  std::vector<unsigned char> expected = pattern(seed_of(r, r.peer, step), r.bytes);
  expected.resize(r.bytes + kSlack, kUntouched);
  CHECK_BYTES(expected, in.contents(), what);
}

int count_of(const Round& r) { return static_cast<int>(r.bytes); }

// Rank 0 sends first, rank 1 receives first, on the thread's communicator.
void blocking_exchange(const Round& r) {
  const auto out = outgoing(r, 0);
  const auto in = incoming(r);
  MPI_Status status{};
  if (g_rank == 0) {
    MPI_Send(out->data(), count_of(r), MPI_BYTE, r.peer, r.round, r.own);
    MPI_Recv(in->data(), count_of(r), MPI_BYTE, r.peer, r.round, r.own, &status);
  } else {
    MPI_Recv(in->data(), count_of(r), MPI_BYTE, r.peer, r.round, r.own, &status);
    MPI_Send(out->data(), count_of(r), MPI_BYTE, r.peer, r.round, r.own);
  }
  check_incoming(r, 0, *in, status, "Send/Recv");
}

void sendrecv_exchange(const Round& r) {
  const auto out = outgoing(r, 1);
  const auto in = incoming(r);
  MPI_Status status{};
  MPI_Sendrecv(out->data(), count_of(r), MPI_BYTE, r.peer, shared_tag(r, 1), in->data(), count_of(r), MPI_BYTE, r.peer,
               shared_tag(r, 1), r.shared, &status);
  check_incoming(r, 1, *in, status, "Sendrecv");
}

void window_exchange(const Round& r) {
  std::vector<std::unique_ptr<Buffer>> outs;
  std::vector<std::unique_ptr<Buffer>> ins;
  std::vector<MPI_Request> requests(2 * kWindow, MPI_REQUEST_NULL);
  for (int k = 0; k < kWindow; ++k) {
    ins.push_back(incoming(r));
    MPI_Irecv(ins.back()->data(), count_of(r), MPI_BYTE, r.peer, shared_tag(r, 2 + k), r.shared,
              &requests[static_cast<std::size_t>(k)]);
  }
  for (int k = 0; k < kWindow; ++k) {
    outs.push_back(outgoing(r, 2 + k));
    MPI_Isend(outs.back()->data(), count_of(r), MPI_BYTE, r.peer, shared_tag(r, 2 + k), r.shared,
              &requests[static_cast<std::size_t>(kWindow + k)]);
  }
  std::vector<MPI_Status> statuses(requests.size());
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  for (int k = 0; k < kWindow; ++k) {
    CHECK_EQ(statuses[static_cast<std::size_t>(k)].MPI_TAG, shared_tag(r, 2 + k), "window tag");
    check_incoming(r, 2 + k, *ins[static_cast<std::size_t>(k)], statuses[static_cast<std::size_t>(k)], "Irecv window");
  }
}

// Probe (blocking, or Iprobe in a loop) with wildcards on the thread's own
// communicator, where only this step's message can be first.
void probe_exchange(const Round& r, bool blocking) {
  const int step = blocking ? 6 : 7;
  const int tag = 1000 + step * 100 + r.round;
  const auto out = outgoing(r, step);
  MPI_Request send = MPI_REQUEST_NULL;
  MPI_Isend(out->data(), count_of(r), MPI_BYTE, r.peer, tag, r.own, &send);
  MPI_Status probed{};
  if (blocking) {
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, r.own, &probed);
  } else {
    int found = 0;
    while (found == 0) {
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, r.own, &found, &probed);
      std::this_thread::yield();
    }
  }
  CHECK_EQ(probed.MPI_TAG, tag, "%s found this step's message", blocking ? "Probe" : "Iprobe");
  int probed_bytes = -1;
  MPI_Get_count(&probed, MPI_BYTE, &probed_bytes);
  CHECK_EQ(probed_bytes, count_of(r), "the probe's count");
  const auto in = incoming(r);
  MPI_Status status{};
  MPI_Recv(in->data(), probed_bytes, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, r.own, &status);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  check_incoming(r, step, *in, status, blocking ? "Probe+Recv" : "Iprobe+Recv");
}

// Matched probes on the shared communicator: the message is this thread's
// alone once matched, whatever the other threads receive meanwhile.
void matched_probe_exchange(const Round& r, bool blocking) {
  const int step = blocking ? 8 : 9;
  const auto out = outgoing(r, step);
  MPI_Request send = MPI_REQUEST_NULL;
  MPI_Isend(out->data(), count_of(r), MPI_BYTE, r.peer, shared_tag(r, step), r.shared, &send);
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status probed{};
  const auto in = incoming(r);
  MPI_Status status{};
  if (blocking) {
    MPI_Mprobe(MPI_ANY_SOURCE, shared_tag(r, step), r.shared, &message, &probed);
    MPI_Mrecv(in->data(), count_of(r), MPI_BYTE, &message, &status);
  } else {
    int found = 0;
    while (found == 0) {
      MPI_Improbe(MPI_ANY_SOURCE, shared_tag(r, step), r.shared, &found, &message, &probed);
      std::this_thread::yield();
    }
    MPI_Request receive = MPI_REQUEST_NULL;
    MPI_Imrecv(in->data(), count_of(r), MPI_BYTE, &message, &receive);
    MPI_Wait(&receive, &status);
  }
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  check_incoming(r, step, *in, status, blocking ? "Mprobe+Mrecv" : "Improbe+Imrecv");
}

// One Allreduce per thread, on its own communicator, concurrently with the
// other threads' traffic.
void allreduce_on_own(const Round& r) {
  const int count = static_cast<int>(r.bytes / sizeof(int));
  std::vector<int> mine(static_cast<std::size_t>(count));
  std::vector<int> expected(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    mine[static_cast<std::size_t>(i)] = (g_rank + 1) * (i + r.thread * 7 + r.round);
    expected[static_cast<std::size_t>(i)] = 3 * (i + r.thread * 7 + r.round);  // ranks 0 and 1: 1x + 2x
  }
  Buffer send(r.send_memory, r.bytes);
  send.upload(mine.data(), r.bytes);
  Buffer receive(r.receive_memory, r.bytes + kSlack);
  receive.fill(std::vector<unsigned char>(r.bytes + kSlack, kUntouched));
  MPI_Allreduce(send.data(), receive.data(), count, MPI_INT, MPI_SUM, r.own);
  std::vector<unsigned char> want(r.bytes + kSlack, kUntouched);
  std::memcpy(want.data(), expected.data(), r.bytes);
  CHECK_BYTES(want, receive.contents(), "Allreduce on a thread's communicator");
}

void concurrent_thread(int t, MPI_Comm own, MPI_Comm shared, const std::vector<Memory>& memories) {
  const std::size_t kinds = memories.size();
  for (int round = 0; round < kConcurrentRounds; ++round) {
    const std::size_t turn = static_cast<std::size_t>(round + t + g_rank);
    const Round r{t,
                  round,
                  1 - g_rank,
                  own,
                  shared,
                  memories[turn % kinds],
                  memories[(turn + 1) % kinds],
                  concurrent_size(round)};
    blocking_exchange(r);
    sendrecv_exchange(r);
    window_exchange(r);
    probe_exchange(r, true);
    probe_exchange(r, false);
    matched_probe_exchange(r, true);
    matched_probe_exchange(r, false);
    allreduce_on_own(r);
  }
}

void run_concurrent(const std::vector<Memory>& memories) {
  std::vector<MPI_Comm> own(kConcurrentThreads);
  for (MPI_Comm& comm : own) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &shared);
  std::vector<std::thread> threads;
  for (int t = 0; t < kConcurrentThreads; ++t) {
    threads.emplace_back([&, t] { concurrent_thread(t, own[static_cast<std::size_t>(t)], shared, memories); });
  }
  for (std::thread& thread : threads) thread.join();
  MPI_Comm_free(&shared);
  for (MPI_Comm& comm : own) MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  bool expect_multiple = false;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--expect-multiple") expect_multiple = std::string(argv[i + 1]) != "0";
  }
  if (options.uses_device()) init_device_before_mpi();
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  Checks::instance().set_context("thread level");
  if (expect_multiple) CHECK_EQ(provided, MPI_THREAD_MULTIPLE, "the MPI's MPI_THREAD_MULTIPLE provided");
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
  MPI_Barrier(MPI_COMM_WORLD);
  if (provided == MPI_THREAD_MULTIPLE) {
    Checks::instance().set_context("threads calling MPI at once");
    run_concurrent(options.memories);
  } else {
    std::printf("thread level %d: the concurrent phase needs MPI_THREAD_MULTIPLE\n", provided);
  }
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
