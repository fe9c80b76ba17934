// Seeded randomized stress of point-to-point: many messages of random size,
// memory kind (host or device on either side), send kind (blocking,
// nonblocking, synchronous, persistent) and receive style (exact,
// MPI_ANY_SOURCE, fully wild on a second communicator, persistent, every
// probe form) among all ranks. Interleaved with them, while each round's
// nonblocking messages are still in flight: a collective on a
// sub-communicator (halves of the job, or its ranks reversed), and a
// receive that nothing matches, cancelled. Every message's bytes, count and
// source are verified, every collective's result, every cancel; every rank
// checks that it got each of its messages exactly once. The seed is
// printed; --seed replays a run.
//
//   p2p_stress [--messages N] [--seed S] [--max-bytes B] [--memory host|device|both]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

enum class SendKind { send, ssend, isend, issend, persistent };
enum class RecvKind { exact, any_source, wild, probe, iprobe, mprobe, improbe, persistent };
constexpr int kRecvKinds = 8;

struct Message {
  int index = 0;  // also its tag: unique in the run
  int source = 0;
  int dest = 0;
  std::size_t bytes = 0;
  Memory send_memory = Memory::host;
  Memory recv_memory = Memory::host;
  SendKind send = SendKind::isend;
  RecvKind recv = RecvKind::exact;
};

struct Settings {
  int messages = 10000;
  unsigned seed = 0;
  std::size_t max_bytes = 2u << 20;
  std::vector<Memory> memories{Memory::host, Memory::device};
};

bool is_probe(RecvKind kind) {
  return kind == RecvKind::probe || kind == RecvKind::iprobe || kind == RecvKind::mprobe ||
         kind == RecvKind::improbe;
}

std::size_t random_size(std::mt19937& random, std::size_t max_bytes) {
  const unsigned bucket = random() % 100;
  std::size_t limit = 300;                     // eager, around the envelope's 256 bytes
  if (bucket >= 40) limit = 64u << 10;         // rendezvous, small
  if (bucket >= 75) limit = 1u << 20;
  if (bucket >= 97) limit = max_bytes;
  return random() % (std::min(limit, max_bytes) + 1);
}

// The same schedule on every rank, from the seed.
std::vector<Message> make_schedule(const Settings& settings, int ranks) {
  std::mt19937 random(settings.seed);
  std::vector<Message> schedule(static_cast<std::size_t>(settings.messages));
  for (int i = 0; i < settings.messages; ++i) {
    Message& m = schedule[static_cast<std::size_t>(i)];
    m.index = i;
    m.source = static_cast<int>(random() % ranks);
    m.dest = static_cast<int>(random() % (ranks - 1));
    if (m.dest >= m.source) ++m.dest;
    m.bytes = random_size(random, settings.max_bytes);
    m.send_memory = settings.memories[random() % settings.memories.size()];
    m.recv_memory = settings.memories[random() % settings.memories.size()];
    m.recv = static_cast<RecvKind>(random() % kRecvKinds);
    // Blocking sends only where the receive is posted before anyone sends:
    // a standard send may wait for its receive, as in any MPI.
    m.send = static_cast<SendKind>(random() % 5);
    if (is_probe(m.recv) && (m.send == SendKind::send || m.send == SendKind::ssend)) m.send = SendKind::isend;
  }
  return schedule;
}

std::vector<unsigned char> payload(const Settings& settings, const Message& m) {
  return pattern(settings.seed * 7919u + static_cast<unsigned>(m.index), m.bytes);
}

constexpr std::size_t kSlack = 16;

// The communicators of a run: the wild receives' and the collectives'.
struct Communicators {
  MPI_Comm wild = MPI_COMM_NULL;      // a duplicate of MPI_COMM_WORLD
  MPI_Comm halves = MPI_COMM_NULL;    // even and odd ranks apart
  MPI_Comm reversed = MPI_COMM_NULL;  // every rank, in reverse order
};

Communicators make_communicators() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Communicators comms;
  MPI_Comm_dup(MPI_COMM_WORLD, &comms.wild);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms.halves);
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &comms.reversed);
  return comms;
}

void free_communicators(Communicators* comms) {
  MPI_Comm_free(&comms->wild);
  MPI_Comm_free(&comms->halves);
  MPI_Comm_free(&comms->reversed);
}

enum class CollectiveKind { allreduce, bcast, allgather, alltoall };
constexpr int kCollectiveKinds = 4;
const char* collective_name(CollectiveKind kind) {
  static const char* const names[] = {"Allreduce", "Bcast", "Allgather", "Alltoall"};
  return names[static_cast<int>(kind)];
}

// A value that rank `from` contributes, for rank `to` (Alltoall), at `i`.
int contribution(unsigned seed, std::size_t round, int from, int to, std::size_t i) {
  return static_cast<int>((seed % 1000) + round * 3 + static_cast<unsigned>(from) * 1009u +
                          static_cast<unsigned>(to) * 17u + i * 7u) % 100000;
}

struct CollectiveData {
  std::vector<int> send;
  std::vector<int> expected;  // what the receive buffer must hold after
};

CollectiveData collective_data(CollectiveKind kind, unsigned seed, std::size_t round, int me, int size, int root,
                               std::size_t count) {
  CollectiveData data;
  const auto n = static_cast<std::size_t>(size);
  switch (kind) {
    case CollectiveKind::allreduce:
      for (std::size_t i = 0; i < count; ++i) {
        data.send.push_back(contribution(seed, round, me, 0, i));
        int sum = 0;
        for (int r = 0; r < size; ++r) sum += contribution(seed, round, r, 0, i);
        data.expected.push_back(sum);
      }
      break;
    case CollectiveKind::bcast:
      for (std::size_t i = 0; i < count; ++i) {
        data.send.push_back(me == root ? contribution(seed, round, root, 0, i) : -1);
        data.expected.push_back(contribution(seed, round, root, 0, i));
      }
      break;
    case CollectiveKind::allgather:
      for (std::size_t i = 0; i < count; ++i) data.send.push_back(contribution(seed, round, me, 0, i));
      for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          data.expected.push_back(contribution(seed, round, static_cast<int>(r), 0, i));
        }
      }
      break;
    case CollectiveKind::alltoall:
      for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          data.send.push_back(contribution(seed, round, me, static_cast<int>(r), i));
          data.expected.push_back(contribution(seed, round, static_cast<int>(r), me, i));
        }
      }
      break;
  }
  return data;
}

// One collective per round, the same on every rank of its communicator
// (drawn from the seed and the round): its kind, communicator, count and
// memory; every element of the result checked.
void run_collective(const Settings& settings, const Communicators& comms, std::size_t round) {
  std::mt19937 random(settings.seed ^ static_cast<unsigned>(round * 2654435761u));
  const auto kind = static_cast<CollectiveKind>(random() % kCollectiveKinds);
  const bool halves = random() % 2 == 0;
  MPI_Comm comm = halves ? comms.halves : comms.reversed;
  const std::size_t count = (random() % 4 == 0) ? random() % 16 : random() % 16384;
  const Memory memory = settings.memories[random() % settings.memories.size()];
  int me = 0;
  int size = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  const int root = static_cast<int>(random() % static_cast<unsigned>(size));
  const CollectiveData data = collective_data(kind, settings.seed, round, me, size, root, count);
  const std::size_t send_bytes = data.send.size() * sizeof(int);
  const std::size_t receive_bytes = data.expected.size() * sizeof(int);
  Buffer out(memory, send_bytes + sizeof(int));
  Buffer in(memory, receive_bytes + sizeof(int));
  if (send_bytes != 0) out.upload(data.send.data(), send_bytes);
  const int n = static_cast<int>(count);
  int rc = MPI_SUCCESS;
  switch (kind) {
    case CollectiveKind::allreduce:
      rc = MPI_Allreduce(out.data(), in.data(), n, MPI_INT, MPI_SUM, comm);
      break;
    case CollectiveKind::bcast:
      rc = MPI_Bcast(out.data(), n, MPI_INT, root, comm);
      break;
    case CollectiveKind::allgather:
      rc = MPI_Allgather(out.data(), n, MPI_INT, in.data(), n, MPI_INT, comm);
      break;
    case CollectiveKind::alltoall:
      rc = MPI_Alltoall(out.data(), n, MPI_INT, in.data(), n, MPI_INT, comm);
      break;
  }
  const char* what = collective_name(kind);
  CHECK_EQ(rc, MPI_SUCCESS, "round %zu: %s of %zu ints, %s memory, on %s", round, what, count, memory_name(memory),
           halves ? "halves" : "reversed ranks");
  std::vector<int> result(data.expected.size());
  const Buffer& result_buffer = kind == CollectiveKind::bcast ? out : in;  // a Bcast's result is in place
  if (receive_bytes != 0) result_buffer.download(result.data(), receive_bytes);
  CHECK_TRUE(result == data.expected, "round %zu: %s of %zu ints, %s memory, on %s: every element", round, what,
             count, memory_name(memory), halves ? "halves" : "reversed ranks");
}

// A posted receive and its buffer.
struct PostedReceive {
  const Message* expected = nullptr;  // null for wild receives
  std::unique_ptr<Buffer> buffer;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status status{};
};

class Rank {
 public:
  Rank(const Settings& settings, const std::vector<Message>& schedule, int rank, const Communicators& comms)
      : settings_(settings), schedule_(schedule), rank_(rank), wild_(comms.wild), comms_(comms),
        seen_(schedule.size(), 0) {}

  void run_round(std::size_t round, std::size_t first, std::size_t last) {
    std::vector<PostedReceive> posted;
    std::vector<const Message*> probed;
    std::size_t wild_count = 0;
    Memory wild_memory = Memory::host;
    for (std::size_t i = first; i < last; ++i) {
      const Message& m = schedule_[i];
      if (m.dest != rank_) continue;
      if (m.recv == RecvKind::wild) {
        ++wild_count;
        wild_memory = m.recv_memory;
      } else if (is_probe(m.recv)) {
        probed.push_back(&m);
      } else {
        posted.push_back(post_exact(m));
      }
    }
    for (std::size_t k = 0; k < wild_count; ++k) posted.push_back(post_wild(wild_memory));
    MPI_Barrier(MPI_COMM_WORLD);  // every exact and wild receive is posted now

    std::vector<std::unique_ptr<Buffer>> send_buffers;
    std::vector<MPI_Request> send_requests;
    for (std::size_t i = first; i < last; ++i) {
      const Message& m = schedule_[i];
      if (m.source == rank_) send(m, &send_buffers, &send_requests);
    }
    for (const Message* m : probed) receive_probed(*m);
    // The round's nonblocking messages are in flight still. Every rank's
    // blocking sends have ended first (cumpi serves a peer's device
    // rendezvous while it waits in MPI_Wait, not while it blocks inside the
    // MPI library's own blocking collective: docs/design.md, Limits).
    MPI_Request all_sent = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &all_sent);
    MPI_Wait(&all_sent, MPI_STATUS_IGNORE);
    run_collective(settings_, comms_, round);
    cancel_unmatched_receive(round);
    std::vector<MPI_Request> receive_requests;
    for (PostedReceive& r : posted) receive_requests.push_back(r.request);
    std::vector<MPI_Status> statuses(receive_requests.size());
    MPI_Waitall(static_cast<int>(receive_requests.size()), receive_requests.data(), statuses.data());
    for (std::size_t k = 0; k < posted.size(); ++k) {
      posted[k].status = statuses[k];
      verify(posted[k]);
    }
    MPI_Waitall(static_cast<int>(send_requests.size()), send_requests.data(), MPI_STATUSES_IGNORE);
    for (MPI_Request& request : persistent_) MPI_Request_free(&request);
    persistent_.clear();
  }

  void check_all_seen() {
    for (const Message& m : schedule_) {
      if (m.dest != rank_) continue;
      CHECK_EQ(seen_[static_cast<std::size_t>(m.index)], 1, "message %d (from %d, %zu B) received once",
               m.index, m.source, m.bytes);
    }
  }

 private:
  PostedReceive post_exact(const Message& m) {
    PostedReceive r;
    r.expected = &m;
    r.buffer = std::make_unique<Buffer>(m.recv_memory, m.bytes + kSlack);
    const int source = m.recv == RecvKind::any_source ? MPI_ANY_SOURCE : m.source;
    const int capacity = static_cast<int>(m.bytes + kSlack);
    if (m.recv == RecvKind::persistent) {
      // Completed in the round's Waitall through a copy of the handle; the
      // persistent request itself is freed at the round's end.
      persistent_.push_back(MPI_REQUEST_NULL);
      MPI_Recv_init(r.buffer->data(), capacity, MPI_BYTE, source, m.index, MPI_COMM_WORLD, &persistent_.back());
      MPI_Start(&persistent_.back());
      r.request = persistent_.back();
    } else {
      MPI_Irecv(r.buffer->data(), capacity, MPI_BYTE, source, m.index, MPI_COMM_WORLD, &r.request);
    }
    return r;
  }

  PostedReceive post_wild(Memory memory) {
    PostedReceive r;
    r.buffer = std::make_unique<Buffer>(memory, settings_.max_bytes);
    MPI_Irecv(r.buffer->data(), static_cast<int>(settings_.max_bytes), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
              wild_, &r.request);
    return r;
  }

  void send(const Message& m, std::vector<std::unique_ptr<Buffer>>* buffers, std::vector<MPI_Request>* requests) {
    auto buffer = std::make_unique<Buffer>(m.send_memory, m.bytes);
    buffer->fill(payload(settings_, m));
    MPI_Comm comm = m.recv == RecvKind::wild ? wild_ : MPI_COMM_WORLD;
    const int count = static_cast<int>(m.bytes);
    MPI_Request request = MPI_REQUEST_NULL;
    switch (m.send) {
      case SendKind::send: MPI_Send(buffer->data(), count, MPI_BYTE, m.dest, m.index, comm); break;
      case SendKind::ssend: MPI_Ssend(buffer->data(), count, MPI_BYTE, m.dest, m.index, comm); break;
      case SendKind::isend: MPI_Isend(buffer->data(), count, MPI_BYTE, m.dest, m.index, comm, &request); break;
      case SendKind::issend: MPI_Issend(buffer->data(), count, MPI_BYTE, m.dest, m.index, comm, &request); break;
      case SendKind::persistent:
        MPI_Send_init(buffer->data(), count, MPI_BYTE, m.dest, m.index, comm, &request);
        persistent_.push_back(request);
        MPI_Start(&persistent_.back());
        request = persistent_.back();
        break;
    }
    if (m.send == SendKind::persistent) {
      // Completed in the round's Waitall through this copy of the handle;
      // the persistent request itself is freed at the round's end.
      requests->push_back(request);
    } else if (request != MPI_REQUEST_NULL) {
      requests->push_back(request);
    }
    buffers->push_back(std::move(buffer));
  }

  void receive_probed(const Message& m) {
    const int source = (m.index % 2 == 0) ? MPI_ANY_SOURCE : m.source;
    MPI_Status probed{};
    MPI_Message handle = MPI_MESSAGE_NULL;
    int flag = 0;
    switch (m.recv) {
      case RecvKind::probe: MPI_Probe(source, m.index, MPI_COMM_WORLD, &probed); break;
      case RecvKind::iprobe:
        while (!flag) MPI_Iprobe(source, m.index, MPI_COMM_WORLD, &flag, &probed);
        break;
      case RecvKind::mprobe: MPI_Mprobe(source, m.index, MPI_COMM_WORLD, &handle, &probed); break;
      default:
        while (!flag) MPI_Improbe(source, m.index, MPI_COMM_WORLD, &flag, &handle, &probed);
        break;
    }
    int probed_count = -1;
    MPI_Get_count(&probed, MPI_BYTE, &probed_count);
    CHECK_EQ(probed_count, static_cast<long long>(m.bytes), "message %d: probed count", m.index);
    CHECK_EQ(probed.MPI_SOURCE, m.source, "message %d: probed source", m.index);
    PostedReceive r;
    r.expected = &m;
    r.buffer = std::make_unique<Buffer>(m.recv_memory, m.bytes + kSlack);
    const int capacity = static_cast<int>(m.bytes + kSlack);
    if (m.recv == RecvKind::mprobe) {
      MPI_Mrecv(r.buffer->data(), capacity, MPI_BYTE, &handle, &r.status);
    } else if (m.recv == RecvKind::improbe) {
      MPI_Imrecv(r.buffer->data(), capacity, MPI_BYTE, &handle, &r.request);
      MPI_Wait(&r.request, &r.status);
    } else {
      MPI_Recv(r.buffer->data(), capacity, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, &r.status);
    }
    verify(r);
  }

  void verify(const PostedReceive& r) {
    const int tag = r.status.MPI_TAG;
    if (!CHECK_TRUE(tag >= 0 && tag < static_cast<int>(schedule_.size()), "received tag %d is a message", tag)) {
      return;
    }
    const Message& m = schedule_[static_cast<std::size_t>(tag)];
    if (r.expected != nullptr) {
      CHECK_EQ(m.index, r.expected->index, "the receive for message %d got message %d", r.expected->index, tag);
    }
    CHECK_EQ(m.dest, rank_, "message %d is for this rank", m.index);
    CHECK_EQ(r.status.MPI_SOURCE, m.source, "message %d: status source", m.index);
    int count = -1;
    MPI_Get_count(&r.status, MPI_BYTE, &count);
    CHECK_EQ(count, static_cast<long long>(m.bytes), "message %d: count", m.index);
    std::vector<unsigned char> received(m.bytes);
    if (m.bytes != 0) r.buffer->download(received.data(), m.bytes);
    CHECK_BYTES(payload(settings_, m), received, "message bytes");
    ++seen_[static_cast<std::size_t>(m.index)];
  }

  // A receive no message matches (its tag is past every message's), posted
  // and cancelled: it must end cancelled, its buffer untouched.
  void cancel_unmatched_receive(std::size_t round) {
    const Memory memory = settings_.memories[round % settings_.memories.size()];
    const std::size_t bytes = (round % 3 == 0) ? 64 : (64u << 10);
    Buffer buffer(memory, bytes);
    const std::vector<unsigned char> before = pattern(static_cast<unsigned>(round), bytes);
    buffer.fill(before);
    MPI_Request request = MPI_REQUEST_NULL;
    const int tag = static_cast<int>(schedule_.size()) + 1;
    MPI_Irecv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &request);
    MPI_Cancel(&request);
    MPI_Status status{};
    MPI_Wait(&request, &status);
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    CHECK_TRUE(cancelled != 0, "round %zu: an unmatched %s receive ends cancelled", round, memory_name(memory));
    CHECK_BYTES(before, buffer.contents(), "a cancelled receive's buffer");
  }

  const Settings& settings_;
  const std::vector<Message>& schedule_;
  int rank_;
  MPI_Comm wild_;
  const Communicators& comms_;
  std::vector<int> seen_;
  std::vector<MPI_Request> persistent_;
};

Settings parse(int argc, char** argv) {
  Settings settings;
  settings.seed = static_cast<unsigned>(std::time(nullptr));
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--messages") settings.messages = std::atoi(value);
    if (flag == "--seed") settings.seed = static_cast<unsigned>(std::strtoul(value, nullptr, 10));
    if (flag == "--max-bytes") settings.max_bytes = std::strtoull(value, nullptr, 10);
    if (flag == "--memory" && std::strcmp(value, "host") == 0) settings.memories = {Memory::host};
    if (flag == "--memory" && std::strcmp(value, "device") == 0) settings.memories = {Memory::device};
  }
  return settings;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings = parse(argc, argv);
  const bool uses_device = settings.memories.size() > 1 || settings.memories[0] == Memory::device;
  if (uses_device) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Bcast(&settings.seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("p2p_stress: seed %u, %d messages, %d ranks (replay with --seed %u)\n", settings.seed,
                             settings.messages, ranks, settings.seed);
  std::fflush(stdout);
  Communicators comms = make_communicators();
  const std::vector<Message> schedule = make_schedule(settings, ranks);
  Rank me(settings, schedule, rank, comms);
  constexpr std::size_t kRound = 50;
  for (std::size_t first = 0; first < schedule.size(); first += kRound) {
    Checks::instance().set_context(format("round of messages %zu..", first));
    me.run_round(first / kRound, first, std::min(schedule.size(), first + kRound));
  }
  Checks::instance().set_context("all messages");
  me.check_all_seen();
  free_communicators(&comms);
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
