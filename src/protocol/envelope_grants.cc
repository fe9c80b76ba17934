#include "protocol/envelope_grants.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "protocol/channel.h"
#include "protocol/host_receives.h"
#include "protocol/operation_table.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

enum class GrantKind : std::uint32_t { request = 1, granted = 2 };

struct GrantMessage {
  GrantKind kind = GrantKind::request;
  std::uint32_t unused = 0;
};

// What this rank knows of a peer as a receiver of its envelopes.
enum class PeerState : std::uint8_t { unasked, asked, granted };

constexpr unsigned kServeEvery = 16;

class Grants {
 public:
  void start(int world_size) {
    std::lock_guard<std::mutex> lock(mutex_);
    peers_.assign(static_cast<std::size_t>(world_size), PeerState::unasked);
    waiting_.clear();
    granted_any_ = false;
    publish();
  }

  bool may_send_to(int peer) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size()) {
        return false;
      }
      if (peers_[static_cast<std::size_t>(peer)] == PeerState::granted) {
        return true;
      }
      if (peers_[static_cast<std::size_t>(peer)] == PeerState::unasked) {
        peers_[static_cast<std::size_t>(peer)] = PeerState::asked;
        send(peer, GrantKind::request);
        CUMPI_LOG(debug, "asked rank %d to take envelopes; device messages to it go eagerly until it does", peer);
        return false;
      }
    }
    serve();
    std::lock_guard<std::mutex> lock(mutex_);
    return peers_[static_cast<std::size_t>(peer)] == PeerState::granted;
  }

  void serve() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!channel_open() || peers_.empty()) {
      return;
    }
    const RealMpi& mpi = real_mpi();
    for (;;) {
      int found = 0;
      MPI_Status status{};
      if (mpi.Iprobe(MPI_ANY_SOURCE, grant_tag(), channel().comm, &found, &status) != MPI_SUCCESS || found == 0) {
        break;
      }
      GrantMessage message;
      mpi.Recv(&message, static_cast<int>(sizeof(message)), MPI_BYTE, status.MPI_SOURCE, grant_tag(), channel().comm,
               MPI_STATUS_IGNORE);
      if (message.kind == GrantKind::granted) {
        peers_[static_cast<std::size_t>(status.MPI_SOURCE)] = PeerState::granted;
        CUMPI_LOG(debug, "rank %d takes envelopes from this rank", status.MPI_SOURCE);
      } else {
        waiting_.push_back(status.MPI_SOURCE);
      }
    }
    answer_waiting();
  }

  // Unanswered requests and grants are taken off the channel before it is
  // freed.
  void stop() {
    serve();
    std::lock_guard<std::mutex> lock(mutex_);
    peers_.clear();
    waiting_.clear();
    granted_any_ = false;
    publish();
  }

  bool may_arrive() const { return may_arrive_.load(std::memory_order_acquire); }

 private:
  static int grant_tag() { return tag_above_messages() + 1; }

  void send(int peer, GrantKind kind) {
    GrantMessage message;
    message.kind = kind;
    real_mpi().Send(&message, static_cast<int>(sizeof(message)), MPI_BYTE, peer, grant_tag(), channel().comm);
  }

  // Envelopes are possible from the moment a request waits: receives
  // posted from then on that overlap a pending one land privately, so that
  // the overlapping direct receives drain and the grant can be given.
  void answer_waiting() {
    if (!waiting_.empty() && direct_receives_disjoint()) {
      for (int peer : waiting_) {
        send(peer, GrantKind::granted);
        CUMPI_LOG(debug, "rank %d may send envelopes to this rank", peer);
      }
      waiting_.clear();
      granted_any_ = true;
    }
    publish();
  }

  void publish() {
    const bool may_arrive = granted_any_ || !waiting_.empty();
    if (may_arrive_.exchange(may_arrive, std::memory_order_acq_rel) != may_arrive) {
      update_progress_work();  // direct receives may now need service
    }
  }

  std::mutex mutex_;
  std::vector<PeerState> peers_;
  std::vector<int> waiting_;  // peers whose request waits for overlapping direct receives to end
  bool granted_any_ = false;
  std::atomic<bool> may_arrive_{false};
};

Grants& grants() {
  static Grants* instance = new Grants();  // lives until exit
  return *instance;
}

thread_local unsigned t_serve_calls __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace

void start_grants(int world_size) { grants().start(world_size); }

void stop_grants() { grants().stop(); }

bool may_send_envelopes_to(int peer) { return grants().may_send_to(peer); }

bool envelopes_may_arrive() { return grants().may_arrive(); }

void serve_grants_now() { grants().serve(); }

void serve_grants() {
  if (++t_serve_calls % kServeEvery == 0) {
    grants().serve();
  }
}

}  // namespace cumpi::protocol
