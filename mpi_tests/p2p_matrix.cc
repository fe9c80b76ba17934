// Point-to-point conformance: send memory x receive memory x size x every
// intercepted send, receive and completion call. Every byte, every guard byte
// past the message and every status field is checked. Rank 0 sends, rank 1
// receives; run it with plain MPI (host memory only) and under cumpi.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

constexpr std::size_t kGuard = 64;
constexpr int kRounds = 2;  // persistent requests are started twice

enum class SendKind { send, ssend, bsend, rsend, isend, issend, ibsend, irsend,
                      send_init, ssend_init, bsend_init, rsend_init, startall };
enum class RecvKind { recv, irecv, recv_init, probe_recv, iprobe_recv, mprobe_mrecv, improbe_imrecv };
enum class Completion { wait, test_loop, waitall_mixed, waitany_mixed, waitsome_mixed, testall_mixed,
                        testany_mixed, testsome_mixed, get_status_then_wait };

const char* name(SendKind kind) {
  static const char* names[] = {"Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend",
                                "Send_init", "Ssend_init", "Bsend_init", "Rsend_init", "Startall"};
  return names[static_cast<int>(kind)];
}
const char* name(RecvKind kind) {
  static const char* names[] = {"Recv", "Irecv", "Recv_init", "Probe+Recv", "Iprobe+Recv", "Mprobe+Mrecv",
                                "Improbe+Imrecv"};
  return names[static_cast<int>(kind)];
}
const char* name(Completion kind) {
  static const char* names[] = {"Wait", "Test", "Waitall", "Waitany", "Waitsome", "Testall", "Testany",
                                "Testsome", "Request_get_status"};
  return names[static_cast<int>(kind)];
}

const SendKind kSendKinds[] = {SendKind::send, SendKind::ssend, SendKind::bsend, SendKind::rsend,
                               SendKind::isend, SendKind::issend, SendKind::ibsend, SendKind::irsend,
                               SendKind::send_init, SendKind::ssend_init, SendKind::bsend_init,
                               SendKind::rsend_init, SendKind::startall};
const RecvKind kRecvKinds[] = {RecvKind::recv, RecvKind::irecv, RecvKind::recv_init, RecvKind::probe_recv,
                               RecvKind::iprobe_recv, RecvKind::mprobe_mrecv, RecvKind::improbe_imrecv};
const Completion kCompletions[] = {Completion::wait, Completion::test_loop, Completion::waitall_mixed,
                                   Completion::waitany_mixed, Completion::waitsome_mixed,
                                   Completion::testall_mixed, Completion::testany_mixed,
                                   Completion::testsome_mixed, Completion::get_status_then_wait};

bool ready_mode(SendKind kind) {
  return kind == SendKind::rsend || kind == SendKind::irsend || kind == SendKind::rsend_init;
}
bool persistent(SendKind kind) {
  return kind == SendKind::send_init || kind == SendKind::ssend_init || kind == SendKind::bsend_init ||
         kind == SendKind::rsend_init || kind == SendKind::startall;
}

// Host requests that complete at once, mixed into the arrays of the *_mixed
// completions: a self-send pair on MPI_COMM_SELF and a null request.
struct HostCompanions {
  int out = 7;
  int in = 0;
  std::vector<MPI_Request> requests;
  HostCompanions() {
    requests.resize(3, MPI_REQUEST_NULL);
    MPI_Irecv(&in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &requests[0]);
    MPI_Isend(&out, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &requests[1]);
  }
};

// Completes requests[0] (the device one) and any companions with `kind`;
// returns requests[0]'s status.
MPI_Status complete(Completion kind, MPI_Request* device_request, bool persistent_request) {
  MPI_Status status{};
  if (kind == Completion::wait) {
    MPI_Wait(device_request, &status);
    return status;
  }
  if (kind == Completion::test_loop) {
    int flag = 0;
    while (!flag) MPI_Test(device_request, &flag, &status);
    return status;
  }
  if (kind == Completion::get_status_then_wait) {
    int flag = 0;
    while (!flag) MPI_Request_get_status(*device_request, &flag, &status);
    MPI_Status again{};
    MPI_Wait(device_request, &again);
    CHECK_EQ(again.MPI_SOURCE, status.MPI_SOURCE, "status from Wait after Request_get_status");
    return status;
  }
  HostCompanions companions;
  std::vector<MPI_Request> requests = {*device_request, companions.requests[0], companions.requests[1],
                                       companions.requests[2]};
  std::vector<MPI_Status> statuses(requests.size());
  const int n = static_cast<int>(requests.size());
  int flag = 0;
  int index = 0;
  int outcount = 0;
  std::vector<int> indices(requests.size());
  int remaining = 3;  // the null request never completes as "active"
  switch (kind) {
    case Completion::waitall_mixed:
      MPI_Waitall(n, requests.data(), statuses.data());
      remaining = 0;
      break;
    case Completion::testall_mixed:
      while (!flag) MPI_Testall(n, requests.data(), &flag, statuses.data());
      remaining = 0;
      break;
    case Completion::waitany_mixed:
      while (remaining > 0) {
        MPI_Status one{};
        MPI_Waitany(n, requests.data(), &index, &one);
        CHECK_TRUE(index != MPI_UNDEFINED, "Waitany returned MPI_UNDEFINED with active requests");
        if (index == MPI_UNDEFINED) break;
        statuses[index] = one;
        --remaining;
      }
      break;
    case Completion::testany_mixed:
      while (remaining > 0) {
        MPI_Status one{};
        MPI_Testany(n, requests.data(), &index, &flag, &one);
        if (flag && index != MPI_UNDEFINED) {
          statuses[index] = one;
          --remaining;
        }
      }
      break;
    case Completion::waitsome_mixed:
    case Completion::testsome_mixed:
      while (remaining > 0) {
        std::vector<MPI_Status> some(requests.size());
        if (kind == Completion::waitsome_mixed) {
          MPI_Waitsome(n, requests.data(), &outcount, indices.data(), some.data());
        } else {
          MPI_Testsome(n, requests.data(), &outcount, indices.data(), some.data());
        }
        if (outcount == MPI_UNDEFINED) break;
        for (int k = 0; k < outcount; ++k) statuses[indices[k]] = some[k];
        remaining -= outcount;
      }
      break;
    default:
      break;
  }
  CHECK_EQ(remaining, 0, "%s left requests incomplete", name(kind));
  for (std::size_t i = persistent_request ? 1 : 0; i < requests.size(); ++i) {
    CHECK_TRUE(requests[i] == MPI_REQUEST_NULL, "%s left a non-null request", name(kind));
  }
  CHECK_EQ(companions.in, 7, "host companion request data");
  *device_request = requests[0];
  return statuses[0];
}

struct Case {
  Memory send_memory;
  Memory recv_memory;
  std::size_t bytes;
  SendKind send;
  RecvKind recv;
  Completion completion;
  int tag;
  unsigned seed;
};

void run_sender(const Case& c) {
  Buffer buffer(c.send_memory, c.bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  const int count = static_cast<int>(c.bytes);
  if (persistent(c.send)) {
    buffer.fill(pattern(c.seed, c.bytes));
    switch (c.send) {
      case SendKind::ssend_init: MPI_Ssend_init(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      case SendKind::bsend_init: MPI_Bsend_init(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      case SendKind::rsend_init: MPI_Rsend_init(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      default: MPI_Send_init(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
    }
  }
  for (int round = 0; round < kRounds; ++round) {
    buffer.fill(pattern(c.seed + round, c.bytes));
    if (ready_mode(c.send)) {
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  // the receive is posted
    }
    switch (c.send) {
      case SendKind::send: MPI_Send(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD); break;
      case SendKind::ssend: MPI_Ssend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD); break;
      case SendKind::bsend: MPI_Bsend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD); break;
      case SendKind::rsend: MPI_Rsend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD); break;
      case SendKind::isend: MPI_Isend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      case SendKind::issend: MPI_Issend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      case SendKind::ibsend: MPI_Ibsend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      case SendKind::irsend: MPI_Irsend(buffer.data(), count, MPI_BYTE, 1, c.tag, MPI_COMM_WORLD, &request); break;
      case SendKind::startall: MPI_Startall(1, &request); break;
      default: MPI_Start(&request); break;
    }
    if (request != MPI_REQUEST_NULL) {
      complete(c.completion, &request, persistent(c.send));
    }
    // The send buffer itself is untouched by sending.
    CHECK_BYTES(pattern(c.seed + round, c.bytes), buffer.contents(), "send buffer after the send");
  }
  if (persistent(c.send)) {
    MPI_Request_free(&request);
  }
}

void verify_received(const Case& c, const Buffer& buffer, const MPI_Status& status, int round) {
  std::vector<unsigned char> expected = pattern(c.seed + round, c.bytes);
  const std::vector<unsigned char> guard = pattern(999, kGuard);
  expected.insert(expected.end(), guard.begin(), guard.end());
  const std::vector<unsigned char> received = buffer.contents();
  if (!CHECK_BYTES(expected, received, "received bytes and the guard after them")) {
    const std::vector<unsigned char> other = pattern(c.seed + 1 - round, c.bytes);
    std::fprintf(stderr, "  in round %d; the other round's data: %s\n", round,
                 std::equal(other.begin(), other.end(), received.begin()) ? "yes" : "no");
  }
  CHECK_EQ(status.MPI_SOURCE, 0, "status source");
  CHECK_EQ(status.MPI_TAG, c.tag, "status tag");
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  CHECK_EQ(count, static_cast<long long>(c.bytes), "MPI_Get_count");
  int cancelled = 1;
  MPI_Test_cancelled(&status, &cancelled);
  CHECK_EQ(cancelled, 0, "status cancelled");
}

void run_receiver(const Case& c) {
  Buffer buffer(c.recv_memory, c.bytes + kGuard);
  const int capacity = static_cast<int>(c.bytes + kGuard);
  const RecvKind kind = ready_mode(c.send) ? RecvKind::irecv : c.recv;
  MPI_Request persistent_request = MPI_REQUEST_NULL;
  if (kind == RecvKind::recv_init) {
    MPI_Recv_init(buffer.data(), capacity, MPI_BYTE, 0, c.tag, MPI_COMM_WORLD, &persistent_request);
  }
  for (int round = 0; round < kRounds; ++round) {
    std::vector<unsigned char> prefill(c.bytes + kGuard, 0x5a);
    const std::vector<unsigned char> guard = pattern(999, kGuard);
    std::copy(guard.begin(), guard.end(), prefill.begin() + static_cast<std::ptrdiff_t>(c.bytes));
    buffer.fill(prefill);
    MPI_Status status{};
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Message message = MPI_MESSAGE_NULL;
    int flag = 0;
    switch (kind) {
      case RecvKind::recv:
        MPI_Recv(buffer.data(), capacity, MPI_BYTE, 0, c.tag, MPI_COMM_WORLD, &status);
        break;
      case RecvKind::irecv:
        MPI_Irecv(buffer.data(), capacity, MPI_BYTE, 0, c.tag, MPI_COMM_WORLD, &request);
        if (ready_mode(c.send)) MPI_Send(nullptr, 0, MPI_BYTE, 0, 9999, MPI_COMM_WORLD);
        status = complete(c.completion, &request, false);
        break;
      case RecvKind::recv_init:
        MPI_Start(&persistent_request);
        status = complete(c.completion == Completion::get_status_then_wait ? Completion::wait : c.completion,
                          &persistent_request, true);
        break;
      case RecvKind::probe_recv: {
        MPI_Status probed{};
        MPI_Probe(MPI_ANY_SOURCE, c.tag, MPI_COMM_WORLD, &probed);
        int probed_count = -1;
        MPI_Get_count(&probed, MPI_BYTE, &probed_count);
        CHECK_EQ(probed_count, static_cast<long long>(c.bytes), "MPI_Probe count");
        MPI_Recv(buffer.data(), capacity, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, &status);
        break;
      }
      case RecvKind::iprobe_recv: {
        MPI_Status probed{};
        while (!flag) MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &probed);
        int probed_count = -1;
        MPI_Get_count(&probed, MPI_BYTE, &probed_count);
        CHECK_EQ(probed_count, static_cast<long long>(c.bytes), "MPI_Iprobe count");
        MPI_Recv(buffer.data(), capacity, MPI_BYTE, 0, probed.MPI_TAG, MPI_COMM_WORLD, &status);
        break;
      }
      case RecvKind::mprobe_mrecv: {
        MPI_Status probed{};
        MPI_Mprobe(0, c.tag, MPI_COMM_WORLD, &message, &probed);
        MPI_Mrecv(buffer.data(), capacity, MPI_BYTE, &message, &status);
        CHECK_TRUE(message == MPI_MESSAGE_NULL, "Mrecv resets the message handle");
        break;
      }
      case RecvKind::improbe_imrecv: {
        MPI_Status probed{};
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &probed);
        MPI_Imrecv(buffer.data(), capacity, MPI_BYTE, &message, &request);
        status = complete(c.completion, &request, false);
        break;
      }
    }
    verify_received(c, buffer, status, round);
  }
  if (persistent_request != MPI_REQUEST_NULL) {
    MPI_Request_free(&persistent_request);
  }
}

void run_matrix(const Options& options, int rank) {
  int tag = 100;
  unsigned seed = 1;
  for (Memory send_memory : options.memories) {
    for (Memory recv_memory : options.memories) {
      for (std::size_t bytes : options.sizes) {
        const std::size_t scenarios = sizeof(kSendKinds) / sizeof(kSendKinds[0]);
        for (std::size_t i = 0; i < scenarios; ++i) {
          Case c{send_memory, recv_memory, bytes, kSendKinds[i],
                 kRecvKinds[i % (sizeof(kRecvKinds) / sizeof(kRecvKinds[0]))],
                 kCompletions[(i + bytes) % (sizeof(kCompletions) / sizeof(kCompletions[0]))], tag++, seed++};
          Checks::instance().set_context(format("%s->%s %zu B %s / %s / %s", memory_name(send_memory),
                                                memory_name(recv_memory), bytes, name(c.send), name(c.recv),
                                                name(c.completion)));
          if (rank == 0) run_sender(c);
          if (rank == 1) run_receiver(c);
        }
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
}

// Both directions at once: Sendrecv and Sendrecv_replace between ranks 0 and 1.
void run_exchanges(const Options& options, int rank) {
  if (rank > 1) return;
  const int peer = 1 - rank;
  for (Memory send_memory : options.memories) {
    for (Memory recv_memory : options.memories) {
      for (std::size_t bytes : options.sizes) {
        Checks::instance().set_context(format("Sendrecv %s->%s %zu B", memory_name(send_memory),
                                              memory_name(recv_memory), bytes));
        Buffer out(send_memory, bytes);
        Buffer in(recv_memory, bytes + kGuard);
        out.fill(pattern(50 + rank, bytes));
        in.fill(std::vector<unsigned char>(bytes + kGuard, 0x11));
        MPI_Status status{};
        MPI_Sendrecv(out.data(), static_cast<int>(bytes), MPI_BYTE, peer, 7, in.data(),
                     static_cast<int>(bytes + kGuard), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &status);
        std::vector<unsigned char> expected = pattern(50 + peer, bytes);
        expected.resize(bytes + kGuard, 0x11);
        CHECK_BYTES(expected, in.contents(), "Sendrecv received bytes");
        CHECK_EQ(status.MPI_SOURCE, peer, "Sendrecv status source");
        int count = -1;
        MPI_Get_count(&status, MPI_BYTE, &count);
        CHECK_EQ(count, static_cast<long long>(bytes), "Sendrecv count");
      }
      if (send_memory != recv_memory) continue;
      for (std::size_t bytes : options.sizes) {
        Checks::instance().set_context(format("Sendrecv_replace %s %zu B", memory_name(send_memory), bytes));
        Buffer both(send_memory, bytes);
        both.fill(pattern(60 + rank, bytes));
        MPI_Status status{};
        MPI_Sendrecv_replace(both.data(), static_cast<int>(bytes), MPI_BYTE, peer, 8, peer, 8, MPI_COMM_WORLD,
                             &status);
        CHECK_BYTES(pattern(60 + peer, bytes), both.contents(), "Sendrecv_replace bytes");
        CHECK_EQ(status.MPI_TAG, 8, "Sendrecv_replace tag");
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (options.uses_device()) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t largest = 0;
  for (std::size_t bytes : options.sizes) largest = std::max(largest, bytes);
  // Room for both rounds of a buffered send in flight at once.
  std::vector<char> attached(2 * (largest + kGuard) + 4 * MPI_BSEND_OVERHEAD + 1024);
  MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));

  run_matrix(options, rank);
  run_exchanges(options, rank);

  void* detached = nullptr;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
