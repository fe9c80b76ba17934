// The agreement board of one communicator whose ranks share a node (DESIGN
// §5): a page of shared memory with a slot per rank, through which the
// ranks agree, call by call, whether every one of them can take a GPU
// algorithm, and then step through it together.
//
// Every rank, whatever its buffers, announces each blocking collective the
// seam takes (coll/algorithm.h) on such a communicator, in the order MPI
// makes every rank call them: a rank with host buffers announces "nothing
// offered" with one store and goes on to the MPI library's own collective
// without waiting. A rank that offers a GPU algorithm waits until every rank
// announced the same call: if all offered it, they run it; if any did not,
// all of them take the staged path (which is the MPI library's collective
// too), so ranks with host buffers never wait for a GPU algorithm that
// cannot come.
//
// A slot's announcement word holds the call a rank announced last with its
// offers, in one word (read apart, a rank's offers could be those of its
// next call). Its progress word counts (call, step) pairs; both only grow.
// A rank seen past the call at its announcement is one that left it
// without the GPU algorithm (which cannot finish without every rank): it
// offered nothing. A rank that cannot go on at some step records the call
// as failed in its slot, where every rank sees it at that step and after.
//
// Nonblocking calls are announced too, but their start must not wait for
// the other ranks (MPI makes it local): a rank waits for the others' offers
// a bounded time only. Whether the call runs on the GPU is then settled by
// one word per call, set once by compare-and-swap: to the agreed offers by
// a rank that saw every rank offer, or to "none" by a rank whose wait ran
// out; every rank follows that word. The words form a ring of
// kDecisionRing; a call may use its word only when every rank announced a
// call past the one that used the word before (may_decide_next), and a
// rank that finds it may not offers nothing, which needs no word.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::coll {

class AgreementBoard {
 public:
  static constexpr std::size_t kPayloadBytes = 448;
  // Steps of one call after its announcement (1..kSteps).
  static constexpr unsigned kSteps = 6;
  // Offers are a bit per algorithm (coll/selection.h lists at most this many).
  static constexpr unsigned kMostAlgorithms = 8;
  // Decision words of nonblocking calls, used in turn.
  static constexpr std::uint64_t kDecisionRing = 256;

  // Collective over `comm` (an intra-communicator of `size` ranks of one
  // node): every rank at the same collective call. *out stays null when
  // shared memory could not be had on some rank; every rank then knows it.
  static Status create(MPI_Comm comm, int rank, int size, std::unique_ptr<AgreementBoard>* out);
  // A board over memory the caller holds, zeroed, of bytes_for(size) bytes
  // (unit tests: threads as ranks). Every rank attaches before any announces.
  static std::size_t bytes_for(int size);
  static std::unique_ptr<AgreementBoard> attach(void* memory, int rank, int size);
  ~AgreementBoard();
  AgreementBoard(const AgreementBoard&) = delete;
  AgreementBoard& operator=(const AgreementBoard&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int pid_of(int rank) const;

  // This rank's payload for the call it announces next (an algorithm's
  // offer: its buffers' IPC handles); another rank's, for the call it
  // announced. A payload stays until its rank announces again, which it
  // does only after the call is over for every rank.
  void* own_payload();
  const void* payload_of(int rank) const;

  // Announces this rank's next call with the algorithms it offers (a bit
  // per algorithm; 0 for none, as from a rank with host buffers); returns
  // the call's number.
  std::uint64_t announce(unsigned offers);

  // Between the polls of a wait: what lets other work go on (progress, the
  // engine's lock, the CPU).
  using WaitHook = std::function<void()>;

  // After announcing `call` with offers: the offers every rank made (their
  // intersection), once every rank announced it, or 0 as soon as one rank
  // shows it offered none of them.
  unsigned agree(std::uint64_t call, unsigned offers, const WaitHook& between_polls) const;
  // Nonblocking calls. Whether the call announced next may use its decision
  // word: every rank announced past the call that used it last. Where not,
  // a rank announces the call with no offers.
  bool may_decide_next() const;
  // After announcing nonblocking `call` with offers: what agree() gives
  // when every rank announced it within `seconds`, else 0; the same on every
  // rank (the call's decision word).
  unsigned agree_within(std::uint64_t call, unsigned offers, double seconds, const WaitHook& between_polls);
  // Step `step` of `call`: this rank is there (`ok` false: it cannot go on).
  void arrive(std::uint64_t call, unsigned step, bool ok);
  // Until every rank arrived at `step` of `call` (or went past it); whether
  // none recorded the call as failed.
  bool wait_all(std::uint64_t call, unsigned step, const WaitHook& between_polls) const;

 private:
  struct Slot;
  AgreementBoard(void* memory, std::size_t bytes, int rank, int size, bool owned);
  void initialise_own_slot();
  Slot& slot(int rank) const;
  std::atomic<std::uint64_t>& decision_of(std::uint64_t call) const;
  static std::uint64_t progress_of(std::uint64_t call, unsigned step);

  void* memory_;
  std::size_t bytes_;
  int rank_;
  int size_;
  bool owned_;               // mapped by create(), unmapped with the board
  std::uint64_t calls_ = 0;  // announced so far by this rank
};

// Boards made and released so far in this process (cumpi_get_coll_info).
struct BoardCounts {
  std::uint64_t made = 0;
  std::uint64_t released = 0;
};
BoardCounts board_counts();

}  // namespace cumpi::coll
