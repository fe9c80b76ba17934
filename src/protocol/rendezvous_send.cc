#include "protocol/rendezvous_send.h"

#include <algorithm>

#include "protocol/channel.h"
#include "protocol/envelope_grants.h"
#include "protocol/node_map.h"
#include "protocol/route_log.h"
#include "protocol/short_envelope.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"
#include "transport/registry.h"
#include "transport/staged/staged_transport.h"

namespace cumpi::protocol {

namespace {

transport::Peer peer_of(int world_rank) { return transport::Peer{world_rank, on_this_node(world_rank), 0}; }

}  // namespace

bool may_go_by_rendezvous(std::size_t bytes) {
  if (!channel_open()) {
    return false;
  }
  if (bytes < kEnvelopeBytes) {
    return bytes >= kShortEnvelopeMinBytes && some_rank_takes_short_envelopes();
  }
  std::size_t smallest = bytes;
  for (const transport::Transport* candidate : transport::transports().ordered()) {
    smallest = std::min(smallest, candidate->rendezvous_from());
  }
  return bytes >= smallest;
}

// One IPC copy beats the two copies of an eager message from the smallest
// sizes on; the pipeline's extra messages pay only for larger ones.
bool goes_by_rendezvous(std::size_t bytes, int peer) {
  const transport::Transport& likely = transport::transports().likely_for(peer_of(peer));
  const bool by_envelope = bytes < kEnvelopeBytes ? likely.carries_short_messages() && short_envelope_fits(bytes, peer)
                                                  : bytes >= likely.rendezvous_from();
  // Asked last: the peer is asked to take envelopes only when one would go.
  return by_envelope && may_send_envelopes_to(peer);
}

RendezvousSend::~RendezvousSend() {
  const RealMpi& mpi = real_mpi();
  for (MPI_Request* request : {&reply_request_, &envelope_request_, &short_envelope_request_}) {
    if (*request != MPI_REQUEST_NULL) {
      mpi.Cancel(request);
      mpi.Wait(request, MPI_STATUS_IGNORE);
    }
  }
  if (short_slot_ != kNoShortSlot) {
    release_short_slot(peer_, static_cast<std::uint32_t>(short_slot_));
  }
}

Status RendezvousSend::start(const char* data, std::size_t bytes, const memory::PointerInfo& owner, int dest, int peer,
                             int tag, MPI_Comm comm, std::int64_t short_slot) {
  source_ = transport::Source{data, owner};
  peer_ = peer;
  short_slot_ = short_slot;
  started_ = stats::enabled() ? stats::now_seconds() : 0.0;
  envelope_ = make_envelope(bytes);
  const transport::Message message = message_of(envelope_, peer_of(peer));
  chosen_ = &transport::transports().choose_for_send(source_, message, &envelope_.blob);
  envelope_.transport = chosen_->id();
  log_route_once(Direction::to, peer, chosen_->name(), chosen_->route_note(source_));
  CUMPI_LOG(debug, "message %llu (%zu bytes) to rank %d (tag %d): rendezvous by %s",
            static_cast<unsigned long long>(envelope_.message_id), bytes, dest, tag, chosen_->name());
  record_ = to_record(envelope_);
  // The reply receive is posted first: FIN may come back at once.
  Status status = post_reply_receive();
  if (!status.is_ok()) {
    return status;
  }
  status = short_slot_ != kNoShortSlot ? send_short(dest, tag, comm)
                                       : from_mpi(real_mpi().Isend(record_.bytes, static_cast<int>(kEnvelopeBytes),
                                                                   MPI_BYTE, dest, tag, comm, &envelope_request_));
  if (!status.is_ok()) {
    return status;
  }
  transfer_ = chosen_->start_send(source_, message, envelope_.blob, &status);
  if (transfer_ != nullptr) {
    moving_ = chosen_;
  }
  return status;
}

// The envelope goes first: a receiver that reads the token may then wait
// for it in a blocking receive.
Status RendezvousSend::send_short(int dest, int tag, MPI_Comm comm) {
  const auto slot = static_cast<std::uint32_t>(short_slot_);
  envelope_.short_slot = slot;
  record_ = to_record(envelope_);
  const RealMpi& mpi = real_mpi();
  int rc = mpi.Isend(record_.bytes, static_cast<int>(kEnvelopeBytes), MPI_BYTE, peer_, short_envelope_tag(),
                     channel().comm, &short_envelope_request_);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  const auto bytes = static_cast<std::size_t>(envelope_.bytes);
  write_token(peer_, slot, token_, bytes);
  rc = mpi.Isend(token_, static_cast<int>(bytes), MPI_BYTE, dest, tag, comm, &envelope_request_);
  return from_mpi(rc);
}

Status RendezvousSend::post_reply_receive() {
  return from_mpi(real_mpi().Irecv(&reply_, static_cast<int>(sizeof(reply_)), MPI_BYTE, MPI_ANY_SOURCE,
                                   reply_tag(envelope_.message_id), channel().comm, &reply_request_));
}

void RendezvousSend::serve_pull(int receiver, Status* error) {
  const std::size_t bytes = static_cast<std::size_t>(std::min<std::uint64_t>(reply_.bytes, envelope_.bytes));
  const transport::PipelineShape shape{bytes, static_cast<std::size_t>(std::max<std::uint64_t>(reply_.chunk, 1)),
                                       static_cast<int>(std::max<std::uint32_t>(reply_.depth, 1))};
  transfer_ = transport::staged_transport().serve_pull(source_, message_of(envelope_, peer_of(receiver)), shape, error);
  moving_ = &transport::staged_transport();
  if (error->is_ok()) {
    *error = post_reply_receive();
  }
}

bool RendezvousSend::advance(Status* error) {
  const RealMpi& mpi = real_mpi();
  int flag = 0;
  if (envelope_request_ != MPI_REQUEST_NULL) {
    const int rc = mpi.Test(&envelope_request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      *error = from_mpi(rc);
      return true;
    }
  }
  if (short_envelope_request_ != MPI_REQUEST_NULL) {
    const int rc = mpi.Test(&short_envelope_request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      *error = from_mpi(rc);
      return true;
    }
  }
  if (reply_request_ != MPI_REQUEST_NULL) {
    MPI_Status status{};
    const int rc = mpi.Test(&reply_request_, &flag, &status);
    if (rc != MPI_SUCCESS) {
      *error = from_mpi(rc);
      return true;
    }
    if (flag != 0) {
      CUMPI_LOG(debug, "message %llu: %s from rank %d", static_cast<unsigned long long>(envelope_.message_id),
                reply_.kind == ReplyKind::pull ? "pull request" : "FIN", status.MPI_SOURCE);
    }
    if (flag != 0 && reply_.kind == ReplyKind::pull) {
      if (reply_.every_message != 0) {
        chosen_->declined_by(status.MPI_SOURCE);
      }
      // A transport that waited for the receiver's go-ahead (ucx) gives up.
      transfer_.reset();
      serve_pull(status.MPI_SOURCE, error);
    } else if (flag != 0) {
      fin_ = true;
    }
    if (!error->is_ok()) {
      return true;
    }
  }
  if (transfer_ != nullptr && !transfer_done_) {
    transfer_done_ = transfer_->advance(error);
    if (!error->is_ok()) {
      return true;
    }
  }
  const bool done = fin_ && envelope_request_ == MPI_REQUEST_NULL && short_envelope_request_ == MPI_REQUEST_NULL &&
                    (transfer_ == nullptr || transfer_done_);
  if (done && stats::enabled()) {
    // The transport that moved the data: a served pull's, else the chosen
    // one's (CUDA IPC moves nothing here: the receiver copies).
    const transport::Transport* carrier = moving_ != nullptr ? moving_ : chosen_;
    stats::record(carrier->route(), static_cast<std::size_t>(envelope_.bytes), stats::now_seconds() - started_,
                  stats::Side::sent);
  }
  return done;
}

bool RendezvousSendOperation::advance() {
  Status error;
  if (!send.advance(&error)) {
    return false;
  }
  outcome->error = request_error_code(error);
  return true;
}

}  // namespace cumpi::protocol
