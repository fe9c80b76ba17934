#include "coll/agreement.h"

#include <memory>
#include <thread>

#include "protocol/channel.h"
#include "protocol/progress.h"
#include "runtime/engine_lock.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi::coll {

namespace {

// The collective layer's state of one communicator.
class CollectiveState final : public protocol::CommState {
 public:
  bool decided = false;  // whether the board was made, or found impossible
  std::unique_ptr<AgreementBoard> board;
};

bool may_have_board(const protocol::CommContext& context) {
  return !context.inter() && context.all_on_one_node() && context.size() >= 2;
}

CollectiveState& state_of(protocol::CommContext& context) {
  auto* state = static_cast<CollectiveState*>(context.collective_state());
  if (state == nullptr) {
    auto made = std::make_unique<CollectiveState>();
    state = made.get();
    context.set_collective_state(std::move(made));
  }
  return *state;
}

}  // namespace

void set_host_calls_announce(bool on) { g_host_calls_announce.store(on, std::memory_order_relaxed); }

AgreementBoard* agreement_board(protocol::CommContext& context, MPI_Comm comm, Status* status) {
  *status = Status::ok();
  if (!host_calls_announce()) {
    return nullptr;
  }
  CollectiveState& state = state_of(context);
  if (state.decided) {
    return state.board.get();
  }
  state.decided = true;
  if (!may_have_board(context)) {
    return nullptr;
  }
  int rank = 0;
  const int rc = real_mpi().Comm_rank(comm, &rank);
  if (rc != MPI_SUCCESS) {
    *status = Status::mpi(rc);
    return nullptr;
  }
  *status = AgreementBoard::create(comm, rank, context.size(), &state.board);
  CUMPI_LOG(debug, "agreement board of a communicator of %d ranks: %s", context.size(),
            state.board != nullptr ? "made" : "none");
  return state.board.get();
}

AgreementBoard* existing_board(protocol::CommContext& context) {
  if (!host_calls_announce()) {
    return nullptr;
  }
  auto* state = static_cast<CollectiveState*>(context.collective_state());
  return state != nullptr ? state->board.get() : nullptr;
}

namespace {

// The MPI library advances its own nonblocking collectives only inside MPI
// calls; a look for any message on cumpi's channel is the cheapest.
void let_mpi_progress() {
  if (protocol::channel().comm == MPI_COMM_NULL) {
    return;  // no engine (unit tests)
  }
  int found = 0;
  real_mpi().Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, protocol::channel().comm, &found, MPI_STATUS_IGNORE);
}

}  // namespace

AgreementBoard::WaitHook polite_wait() {
  constexpr unsigned kSpins = 256;
  return [polls = 0U]() mutable {
    if (++polls < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      return;
    }
    protocol::progress_now_and_then();
    let_mpi_progress();
    runtime::yield_engine();
    std::this_thread::yield();
  };
}

namespace {

// The board of the communicator a blocking host call announced on last,
// or none (it has none): the next such call on it then looks up neither
// its context nor its state (the lookups were most of an 8-byte Bcast's
// cost over plain MPI). Good while no context or state was released since.
// Under the engine lock.
struct LastBoard {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t generation = 0;
  AgreementBoard* board = nullptr;
};
LastBoard g_last_board;

}  // namespace

void announce_on_board(MPI_Comm comm, bool blocking) {
  const runtime::EngineEntry entry;
  const std::uint64_t generation = protocol::context_generation();
  if (blocking && g_last_board.comm == comm && g_last_board.generation == generation && comm != MPI_COMM_NULL) {
    if (g_last_board.board != nullptr) {
      g_last_board.board->announce(0);
    }
    return;
  }
  Status status;
  protocol::CommContext* context = protocol::kept_context_of(comm, &status);
  if (context == nullptr) {
    return;
  }
  AgreementBoard* board = blocking ? agreement_board(*context, comm, &status) : existing_board(*context);
  if (blocking && status.is_ok()) {
    g_last_board = LastBoard{comm, generation, board};
  }
  if (board != nullptr) {
    board->announce(0);
  }
}

}  // namespace cumpi::coll
