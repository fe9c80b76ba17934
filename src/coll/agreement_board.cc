#include "coll/agreement_board.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>

#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"

namespace cumpi::coll {

// A slot per rank, on its own cache lines: the progress word is written by
// its rank only and read by the others.
struct alignas(128) AgreementBoard::Slot {
  std::atomic<std::uint64_t> progress;
  std::atomic<std::uint64_t> failed_call;   // the last call this rank could not go on in
  std::atomic<std::uint64_t> announcement;  // the call last announced, and its offers (word_of)
  int pid;
  alignas(64) unsigned char payload[kPayloadBytes];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the board is shared between processes");

namespace {

constexpr std::size_t kNameBytes = 64;
constexpr unsigned kOfferBits = AgreementBoard::kMostAlgorithms;
constexpr std::uint64_t kOfferMask = (std::uint64_t{1} << kOfferBits) - 1;

// A call and offers in one word: announcements and decisions.
std::uint64_t word_of(std::uint64_t call, unsigned offers) { return call << kOfferBits | offers; }
std::uint64_t call_in(std::uint64_t word) { return word >> kOfferBits; }
unsigned offers_in(std::uint64_t word) { return static_cast<unsigned>(word & kOfferMask); }

// The ring of decision words, after the slots; zero (call 0) is "not yet".
struct alignas(128) Decisions {
  std::atomic<std::uint64_t> word[AgreementBoard::kDecisionRing];
};

std::atomic<std::uint64_t> g_boards_made{0};
std::atomic<std::uint64_t> g_boards_released{0};

std::string board_name() {
  static std::atomic<unsigned> made{0};
  char name[kNameBytes];
  std::snprintf(name, sizeof(name), "/cumpi-coll-%d-%u", static_cast<int>(getpid()), made.fetch_add(1));
  return name;
}

void* map_board(int fd, std::size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

// Rank 0 makes the segment; its name (empty: it failed) goes to the others.
void* create_segment(std::size_t bytes, char name[kNameBytes]) {
  const std::string made = board_name();
  const int fd = shm_open(made.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    CUMPI_LOG(info,
              "no agreement board for a communicator (shm_open %s: %s): its collectives on device buffers "
              "take the staged path",
              made.c_str(), std::strerror(errno));
    name[0] = '\0';
    return nullptr;
  }
  void* memory = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? map_board(fd, bytes) : nullptr;
  close(fd);
  if (memory == nullptr) {
    shm_unlink(made.c_str());
    name[0] = '\0';
    return nullptr;
  }
  std::snprintf(name, kNameBytes, "%s", made.c_str());
  return memory;
}

void* open_segment(std::size_t bytes, const char* name) {
  if (name[0] == '\0') {
    return nullptr;
  }
  const int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) {
    return nullptr;
  }
  void* memory = map_board(fd, bytes);
  close(fd);
  return memory;
}

}  // namespace

AgreementBoard::AgreementBoard(void* memory, std::size_t bytes, int rank, int size, bool owned)
    : memory_(memory), bytes_(bytes), rank_(rank), size_(size), owned_(owned) {
  g_boards_made.fetch_add(1, std::memory_order_relaxed);
}

AgreementBoard::~AgreementBoard() {
  if (owned_) {
    munmap(memory_, bytes_);
  }
  g_boards_released.fetch_add(1, std::memory_order_relaxed);
}

BoardCounts board_counts() {
  return BoardCounts{g_boards_made.load(std::memory_order_relaxed), g_boards_released.load(std::memory_order_relaxed)};
}

std::size_t AgreementBoard::bytes_for(int size) {
  return sizeof(Slot) * static_cast<std::size_t>(size) + sizeof(Decisions);
}

void AgreementBoard::initialise_own_slot() {
  auto* own = new (static_cast<Slot*>(memory_) + rank_) Slot();
  own->pid = static_cast<int>(getpid());
  own->failed_call.store(0, std::memory_order_relaxed);
  own->announcement.store(0, std::memory_order_relaxed);
  own->progress.store(0, std::memory_order_release);
}

std::unique_ptr<AgreementBoard> AgreementBoard::attach(void* memory, int rank, int size) {
  std::unique_ptr<AgreementBoard> board(new AgreementBoard(memory, bytes_for(size), rank, size, false));
  board->initialise_own_slot();
  return board;
}

Status AgreementBoard::create(MPI_Comm comm, int rank, int size, std::unique_ptr<AgreementBoard>* out) {
  out->reset();
  const std::size_t bytes = bytes_for(size);
  char name[kNameBytes] = {};
  void* memory = rank == 0 ? create_segment(bytes, name) : nullptr;
  const RealMpi& mpi = real_mpi();
  int rc = runtime::with_engine_released([&] { return mpi.Bcast(name, kNameBytes, MPI_BYTE, 0, comm); });
  if (rc == MPI_SUCCESS && rank != 0) {
    memory = open_segment(bytes, name);
  }
  // MPI_MAX of "unmapped": the handles cumpi resolves (runtime/mpi_api.h).
  int unmapped = memory != nullptr ? 0 : 1;
  int anywhere_unmapped = 1;
  if (rc == MPI_SUCCESS) {
    rc = runtime::with_engine_released(
        [&] { return mpi.Allreduce(&unmapped, &anywhere_unmapped, 1, MPI_INT, MPI_MAX, comm); });
  }
  if (rank == 0 && name[0] != '\0') {
    shm_unlink(name);  // every rank has it mapped, or none will use it
  }
  if (rc != MPI_SUCCESS || anywhere_unmapped != 0) {
    if (memory != nullptr) {
      munmap(memory, bytes);
    }
    return from_mpi(rc);
  }
  std::unique_ptr<AgreementBoard> board(new AgreementBoard(memory, bytes, rank, size, true));
  board->initialise_own_slot();
  // Every slot is initialised before any rank announces a call.
  int ready = 0;
  int most = 0;
  rc = runtime::with_engine_released([&] { return mpi.Allreduce(&ready, &most, 1, MPI_INT, MPI_MAX, comm); });
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  *out = std::move(board);
  return Status::ok();
}

AgreementBoard::Slot& AgreementBoard::slot(int rank) const { return static_cast<Slot*>(memory_)[rank]; }

// The ring lies after the slots, zeroed with the segment (or by attach()'s caller).
std::atomic<std::uint64_t>& AgreementBoard::decision_of(std::uint64_t call) const {
  auto* decisions = reinterpret_cast<Decisions*>(static_cast<Slot*>(memory_) + size_);
  return decisions->word[call % kDecisionRing];
}

int AgreementBoard::pid_of(int rank) const { return slot(rank).pid; }

void* AgreementBoard::own_payload() { return slot(rank_).payload; }

const void* AgreementBoard::payload_of(int rank) const { return slot(rank).payload; }

// (call, step) in order; steps 0 (announced) to kSteps.
std::uint64_t AgreementBoard::progress_of(std::uint64_t call, unsigned step) { return call * (kSteps + 1) + step; }

std::uint64_t AgreementBoard::announce(unsigned offers) {
  const std::uint64_t call = ++calls_;
  Slot& own = slot(rank_);
  own.progress.store(progress_of(call, 0), std::memory_order_release);
  own.announcement.store(word_of(call, offers), std::memory_order_release);
  return call;
}

unsigned AgreementBoard::agree(std::uint64_t call, unsigned offers, const WaitHook& between_polls) const {
  unsigned agreed = offers;
  for (int r = 0; r < size_ && agreed != 0; ++r) {
    const Slot& other = slot(r);
    std::uint64_t announced = other.announcement.load(std::memory_order_acquire);
    while (call_in(announced) < call) {
      between_polls();
      announced = other.announcement.load(std::memory_order_acquire);
    }
    agreed &= call_in(announced) > call ? 0U : offers_in(announced);
  }
  return agreed;
}

bool AgreementBoard::may_decide_next() const {
  const std::uint64_t next = calls_ + 1;
  if (next <= kDecisionRing) {
    return true;
  }
  const std::uint64_t word_last_used_by = next - kDecisionRing;
  for (int r = 0; r < size_; ++r) {
    if (call_in(slot(r).announcement.load(std::memory_order_acquire)) <= word_last_used_by) {
      return false;
    }
  }
  return true;
}

// A rank that saw every rank's offers sets the word to their intersection,
// one whose wait ran out to 0; the first to swap wins and every rank reads
// it. Where one rank offered none of this rank's offers, no rank can set
// anything but 0, and no word is needed. A rank seen past the call left it
// by the word (set, then, and read again here: it may have been set after
// this rank's first look) or because some rank offered nothing.
unsigned AgreementBoard::agree_within(std::uint64_t call, unsigned offers, double seconds,
                                      const WaitHook& between_polls) {
  std::atomic<std::uint64_t>& decision = decision_of(call);
  const auto decided_now = [&]() -> std::optional<unsigned> {
    const std::uint64_t word = decision.load(std::memory_order_acquire);
    return call_in(word) == call ? std::optional<unsigned>(offers_in(word)) : std::nullopt;
  };
  const double deadline = stats::now_seconds() + seconds;
  for (;;) {
    std::uint64_t seen = decision.load(std::memory_order_acquire);
    if (call_in(seen) == call) {
      return offers_in(seen);
    }
    unsigned agreed = offers;
    bool everyone_announced = true;
    for (int r = 0; r < size_ && agreed != 0; ++r) {
      const std::uint64_t announced = slot(r).announcement.load(std::memory_order_acquire);
      if (call_in(announced) > call) {
        return decided_now().value_or(0U);
      }
      if (call_in(announced) < call) {
        everyone_announced = false;
      } else {
        agreed &= offers_in(announced);
      }
    }
    if (agreed == 0) {
      return 0;
    }
    if (everyone_announced || stats::now_seconds() >= deadline) {
      const std::uint64_t decided = word_of(call, everyone_announced ? agreed : 0U);
      if (decision.compare_exchange_strong(seen, decided, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return offers_in(decided);
      }
      continue;  // another rank decided: the next look reads it
    }
    between_polls();
  }
}

void AgreementBoard::arrive(std::uint64_t call, unsigned step, bool ok) {
  Slot& own = slot(rank_);
  if (!ok) {
    own.failed_call.store(call, std::memory_order_relaxed);
  }
  own.progress.store(progress_of(call, step), std::memory_order_release);
}

bool AgreementBoard::wait_all(std::uint64_t call, unsigned step, const WaitHook& between_polls) const {
  const std::uint64_t arrived = progress_of(call, step);
  bool all_ok = true;
  for (int r = 0; r < size_; ++r) {
    const Slot& other = slot(r);
    std::uint64_t progress = other.progress.load(std::memory_order_acquire);
    while (progress < arrived) {
      between_polls();
      progress = other.progress.load(std::memory_order_acquire);
    }
    all_ok = all_ok && other.failed_call.load(std::memory_order_relaxed) != call;
  }
  return all_ok;
}

}  // namespace cumpi::coll
