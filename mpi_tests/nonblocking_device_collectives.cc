// Nonblocking collectives on device buffers (Iallreduce, Ireduce, Ibcast,
// Iallgather, Ialltoall, Ireduce_scatter_block) against the same calls on
// host buffers, which cumpi passes to the MPI library untouched: every byte
// of every receive buffer compared, a marker past its end included. Then
// the ways MPI lets a program use them that a start waiting for its peers
// could hang or get wrong: a blocking collective between a start and its
// wait; many outstanding, completed by one Waitall or by Test loops; a
// point-to-point message a peer needs before it starts the call; one rank
// arriving late (every rank must then take the same path); host buffers on
// some ranks; a rank a whole ring of calls behind the others; and a fresh
// communicator whose first collective is nonblocking. Where cumpi is there
// and CUMPI_COLL is not "staged", the GPU algorithm must have run.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/checks.h"
#include "common/coll_counters.h"
#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

int g_rank = 0;
int g_size = 0;

bool staged_forced() {
  const char* forced = std::getenv("CUMPI_COLL");
  return forced != nullptr && std::string(forced) == "staged";
}
// What cumpi waits at a nonblocking start (CUMPI_COLL_START_WAIT, default 100).
std::chrono::microseconds start_wait() {
  const char* set = std::getenv("CUMPI_COLL_START_WAIT");
  return std::chrono::microseconds(set != nullptr ? std::atoll(set) : 100);
}

// Ints that differ per rank and element; sums of them stay exact.
std::vector<int> input_of(int rank, std::size_t count) {
  std::vector<int> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>((i * 7919 + 13) % 100003) * (rank + 1) - rank;
  return values;
}

// A nonblocking collective: starts on (send, recv) and gives the request.
using Start = std::function<void(const void* send, void* recv, MPI_Comm comm, MPI_Request* request)>;

struct Case {
  const char* name;
  std::size_t send_ints;
  std::size_t recv_ints;
  Start start;
  bool in_place = false;  // input in the receive buffer at in_place_at ints
  std::size_t in_place_at = 0;
  bool result_here = true;  // a Reduce's non-roots hold none
};

std::vector<unsigned char> bytes_of(const std::vector<int>& ints) {
  std::vector<unsigned char> bytes(ints.size() * sizeof(int));
  if (!bytes.empty()) std::memcpy(bytes.data(), ints.data(), bytes.size());
  return bytes;
}

// The case's buffers, with the input in them and a marker in the receive
// buffer (one byte past its end too).
struct Buffers {
  Buffers(Memory memory, const Case& c, int rank)
      : send(memory, c.send_ints * sizeof(int) + 1), recv(memory, c.recv_ints * sizeof(int) + 1) {
    const std::vector<unsigned char> input = bytes_of(input_of(rank, c.send_ints));
    std::vector<unsigned char> initial(recv.bytes(), 0xA5);
    if (c.in_place && !input.empty())
      std::memcpy(initial.data() + c.in_place_at * sizeof(int), input.data(), input.size());
    if (!input.empty()) send.upload(input.data(), input.size());
    recv.fill(initial);
  }
  void start(const Case& c, MPI_Comm comm, MPI_Request* request) {
    c.start(c.in_place ? MPI_IN_PLACE : send.data(), recv.data(), comm, request);
  }
  Buffer send;
  Buffer recv;
};

void check_same(const Case& c, const Buffers& host, const Buffers& device) {
  if (!c.result_here) return;
  const std::vector<unsigned char> expected = host.recv.contents();
  const std::vector<unsigned char> got = device.recv.contents();
  std::size_t differing = 0;
  for (std::size_t b = 0; b < expected.size(); ++b) differing += expected[b] != got[b] ? 1 : 0;
  CHECK_TRUE(differing == 0, "%s: every byte as the MPI library gives it on host buffers (%zu of %zu differ)", c.name,
             differing, expected.size());
}

// The oracle: the case on host buffers, started and waited for.
std::unique_ptr<Buffers> oracle(const Case& c, MPI_Comm comm, int rank) {
  auto host = std::make_unique<Buffers>(Memory::host, c, rank);
  MPI_Request request;
  host->start(c, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  return host;
}

const Case& case_named(const std::vector<Case>& cases, const char* name) {
  for (const Case& c : cases) {
    if (std::strcmp(c.name, name) == 0) return c;
  }
  std::abort();
}

std::vector<Case> cases_of(std::size_t count, MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(count);
  const std::size_t all = count * static_cast<std::size_t>(size);
  const int last = size - 1;
  std::vector<Case> cases;
  for (bool here : {false, true}) {
    cases.push_back(
        {here ? "Iallreduce in place" : "Iallreduce", count, count,
         [n](const void* s, void* r, MPI_Comm c, MPI_Request* q) { MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, c, q); },
         here});
    cases.push_back({here ? "Iallgather in place" : "Iallgather", count, all,
                     [n](const void* s, void* r, MPI_Comm c, MPI_Request* q) {
                       MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, c, q);
                     },
                     here, count * static_cast<std::size_t>(rank)});
  }
  for (int root : {0, last}) {
    Case reduce{"Ireduce", count, count, [n, root](const void* s, void* r, MPI_Comm c, MPI_Request* q) {
                  MPI_Ireduce(s, r, n, MPI_INT, MPI_MAX, root, c, q);
                }};
    reduce.result_here = rank == root;
    cases.push_back(reduce);
    // The root's input is in its buffer; the others' buffers are the result.
    cases.push_back(
        {root == 0 ? "Ibcast from rank 0" : "Ibcast from the last rank", count, count,
         [n, root](const void*, void* r, MPI_Comm c, MPI_Request* q) { MPI_Ibcast(r, n, MPI_INT, root, c, q); }, true});
  }
  cases.push_back({"Ialltoall", all, all, [n](const void* s, void* r, MPI_Comm c, MPI_Request* q) {
                     MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, c, q);
                   }});
  cases.push_back({"Ireduce_scatter_block", all, count, [n](const void* s, void* r, MPI_Comm c, MPI_Request* q) {
                     MPI_Ireduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, c, q);
                   }});
  return cases;
}

// Every case, one at a time: started, then waited for (MPI_Wait), or
// tested until complete.
void each_case(std::size_t count, MPI_Comm comm, bool by_test) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Checks::instance().set_context(format("count %zu, %s", count, by_test ? "MPI_Test loop" : "MPI_Wait"));
  for (const Case& c : cases_of(count, comm)) {
    const auto host = oracle(c, comm, rank);
    Buffers device(Memory::device, c, rank);
    MPI_Request request;
    device.start(c, comm, &request);
    if (by_test) {
      int done = 0;
      while (done == 0) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    CHECK_TRUE(request == MPI_REQUEST_NULL, "%s: the request is freed at completion", c.name);
    check_same(c, *host, device);
  }
}

// Iallreduce started, a blocking Allreduce on other device buffers, then the wait.
void blocking_call_between_start_and_wait(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Checks::instance().set_context("a blocking Allreduce between Iallreduce and its Wait");
  const std::vector<Case> cases = cases_of(1001, comm);
  const Case& nonblocking = case_named(cases, "Iallreduce");
  const auto host = oracle(nonblocking, comm, rank);
  Buffers device(Memory::device, nonblocking, rank);
  Buffers blocking(Memory::device, nonblocking, rank);
  for (int round = 0; round < 10; ++round) {
    MPI_Request request;
    device.start(nonblocking, comm, &request);
    MPI_Allreduce(blocking.send.data(), blocking.recv.data(), 1001, MPI_INT, MPI_SUM, comm);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check_same(nonblocking, *host, device);
    check_same(nonblocking, *host, blocking);
  }
}

// Every case of one count outstanding at once, on host and device buffers
// alike, completed by one Waitall.
void all_outstanding(std::size_t count, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Checks::instance().set_context(format("every call outstanding at once, count %zu, then MPI_Waitall", count));
  const std::vector<Case> cases = cases_of(count, comm);
  std::vector<std::unique_ptr<Buffers>> expected;
  for (const Case& c : cases) expected.push_back(oracle(c, comm, rank));
  std::vector<std::unique_ptr<Buffers>> device;
  std::vector<std::unique_ptr<Buffers>> host;
  std::vector<MPI_Request> requests(2 * cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    device.push_back(std::make_unique<Buffers>(Memory::device, cases[i], rank));
    host.push_back(std::make_unique<Buffers>(Memory::host, cases[i], rank));
    device.back()->start(cases[i], comm, &requests[2 * i]);
    host.back()->start(cases[i], comm, &requests[2 * i + 1]);
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    check_same(cases[i], *expected[i], *device[i]);
    check_same(cases[i], *expected[i], *host[i]);
  }
}

// Rank 0 starts an Ibcast, then sends rank 1 a message that rank 1 waits
// for before it starts the same Ibcast: the start must not wait for rank 1.
void message_needed_before_the_start(MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Checks::instance().set_context("rank 1 starts only after a message rank 0 sends after its start");
  const std::vector<Case> cases = cases_of(4099, comm);
  const Case& bcast = case_named(cases, "Ibcast from rank 0");
  const auto host = oracle(bcast, comm, rank);
  Buffers device(Memory::device, bcast, rank);
  int token = 0;
  MPI_Request request;
  if (rank == 0) {
    device.start(bcast, comm, &request);
    token = 42;
    MPI_Send(&token, 1, MPI_INT, 1, 7, comm);
  } else {
    if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
    device.start(bcast, comm, &request);
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  CHECK_TRUE(rank != 1 || token == 42, "the message arrived");
  check_same(bcast, *host, device);
}

// The last rank starts well after the others' wait ran out: every rank
// takes the staged path for that call (the same path everywhere), and the
// result is right.
void one_rank_late(MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Checks::instance().set_context("the last rank starts late");
  const std::vector<Case> cases = cases_of(65537, comm);
  const Case& allreduce = case_named(cases, "Iallreduce");
  const auto host = oracle(allreduce, comm, rank);
  Buffers device(Memory::device, allreduce, rank);
  MPI_Barrier(comm);
  if (rank == size - 1) std::this_thread::sleep_for(std::max(4 * start_wait(), std::chrono::microseconds(50000)));
  const CollInfo before = coll_info();
  MPI_Request request;
  device.start(allreduce, comm, &request);
  const CollInfo after = coll_info();
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  check_same(allreduce, *host, device);
  if (under_cumpi()) {
    CHECK_EQ(static_cast<long long>(after.staged - before.staged), 1LL, "this rank took the staged path");
  }
}

// Even ranks on host buffers, odd ranks on device buffers.
void host_and_device_ranks(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Checks::instance().set_context("host buffers on even ranks, device buffers on odd ranks");
  for (const Case& c : cases_of(1001, comm)) {
    const auto host = oracle(c, comm, rank);
    Buffers mine(rank % 2 == 0 ? Memory::host : Memory::device, c, rank);
    MPI_Request request;
    mine.start(c, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check_same(c, *host, mine);
  }
}

// Rank 0 starts `calls` Iallreduces (more than cumpi's ring of decisions)
// before any other rank starts its first; then all complete.
void one_rank_a_ring_ahead(MPI_Comm comm, int calls) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Checks::instance().set_context(format("rank 0 starts %d calls before the others start one", calls));
  const std::vector<Case> cases = cases_of(7, comm);
  const Case& allreduce = case_named(cases, "Iallreduce");
  const auto host = oracle(allreduce, comm, rank);
  std::vector<std::unique_ptr<Buffers>> device;
  for (int i = 0; i < calls; ++i) device.push_back(std::make_unique<Buffers>(Memory::device, allreduce, rank));
  std::vector<MPI_Request> requests(device.size());
  int token = 0;
  if (rank != 0) MPI_Recv(&token, 1, MPI_INT, 0, 8, comm, MPI_STATUS_IGNORE);
  for (std::size_t i = 0; i < device.size(); ++i) device[i]->start(allreduce, comm, &requests[i]);
  if (rank == 0) {
    for (int r = 1; r < size; ++r) MPI_Send(&token, 1, MPI_INT, r, 8, comm);
  }
  MPI_Waitall(calls, requests.data(), MPI_STATUSES_IGNORE);
  for (const auto& one : device) check_same(allreduce, *host, *one);
}

// A communicator whose first collective is nonblocking, then blocking,
// then nonblocking again.
void fresh_communicator(MPI_Comm parent) {
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm comm;
  MPI_Comm_dup(parent, &comm);
  Checks::instance().set_context("a fresh communicator's first collective is nonblocking");
  const std::vector<Case> cases = cases_of(1001, comm);
  const Case& allreduce = case_named(cases, "Iallreduce");
  const auto host = oracle(allreduce, comm, rank);
  for (int round = 0; round < 3; ++round) {
    Buffers device(Memory::device, allreduce, rank);
    MPI_Request request;
    device.start(allreduce, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check_same(allreduce, *host, device);
    if (round == 0) {
      Buffers blocking(Memory::device, allreduce, rank);
      MPI_Allreduce(blocking.send.data(), blocking.recv.data(), 1001, MPI_INT, MPI_SUM, comm);
      check_same(allreduce, *host, blocking);
    }
  }
  MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  bool large = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) large = true;
  }
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // A blocking collective first: GPU algorithms serve nonblocking calls on
  // communicators that had one (it makes the agreement page).
  {
    Buffer send(Memory::device, sizeof(int));
    Buffer recv(Memory::device, sizeof(int));
    MPI_Allreduce(send.data(), recv.data(), 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  const CollInfo at_start = coll_info();
  std::vector<std::size_t> counts = {0, 1, 7, 1001, 65537};
  if (large) counts.push_back(std::size_t{4} << 20);  // 16 MiB of ints
  for (std::size_t count : counts) each_case(count, MPI_COMM_WORLD, false);
  each_case(1001, MPI_COMM_WORLD, true);
  const CollInfo after_cases = coll_info();
  blocking_call_between_start_and_wait(MPI_COMM_WORLD);
  for (std::size_t count : {7, 65537}) all_outstanding(count, MPI_COMM_WORLD);
  message_needed_before_the_start(MPI_COMM_WORLD);
  one_rank_late(MPI_COMM_WORLD);
  host_and_device_ranks(MPI_COMM_WORLD);
  one_rank_a_ring_ahead(MPI_COMM_WORLD, 300);
  fresh_communicator(MPI_COMM_WORLD);
  Checks::instance().set_context("algorithms");
  if (under_cumpi()) {
    if (g_rank == 0) {
      std::printf("nonblocking calls of the first passes: %zu on the GPU, %zu staged\n",
                  after_cases.on_gpu - at_start.on_gpu, after_cases.staged - at_start.staged);
    }
    CHECK_TRUE((after_cases.on_gpu > at_start.on_gpu) == !staged_forced(),
               "the GPU algorithm ran %zu nonblocking calls, the staged one %zu", after_cases.on_gpu - at_start.on_gpu,
               after_cases.staged - at_start.staged);
  }
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
