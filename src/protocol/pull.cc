#include "protocol/pull.h"

#include <algorithm>
#include <string>
#include <utility>

#include "protocol/channel.h"
#include "protocol/host_receives.h"
#include "protocol/node_map.h"
#include "protocol/route_log.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"
#include "runtime/status_bytes.h"
#include "transport/registry.h"
#include "transport/staged/staged_transport.h"

namespace cumpi::protocol {

namespace {

const char* accepted_route(const transport::Transport& transport) {
  return transport.id() == transport::TransportId::staged ? "staged, pushed by the sender" : transport.name();
}

}  // namespace

Status Pull::start(const Envelope& envelope, ReceiveTarget* target) {
  envelope_ = envelope;
  target_ = target;
  delivered_ = static_cast<std::size_t>(std::min<std::uint64_t>(envelope.bytes, target->capacity()));
  truncated_ = envelope.bytes > target->capacity();
  // A copy into host memory that a pending direct receive overlaps would
  // race with MPI writing that receive (an envelope it takes could be
  // overwritten): the message lands here first and is copied in at the end,
  // after that receive was looked at. A target with holes takes it packed.
  if (target->contiguous_destination() == nullptr ||
      (!target->on_device() && overlaps_direct_receive(target->host_first(), target->host_last()))) {
    packed_.resize(delivered_);
  }
  started_ = stats::enabled() ? stats::now_seconds() : 0.0;
  transport::Transport* offered = transport::transports().find(envelope.transport);
  transport::Decline decline;
  if (offered == nullptr) {
    decline.reason = "the sender's transport (id " + std::to_string(static_cast<unsigned>(envelope.transport)) +
                     ") is not in this rank's CUMPI_TRANSPORTS";
    decline.for_peer = true;
  } else {
    Status error;
    transfer_ = offered->accept(message(), envelope.blob, landing(), &decline, &error);
    if (!error.is_ok()) {
      return error;
    }
    if (transfer_ != nullptr) {
      transport_ = offered;
      log_route_once(Direction::from, envelope.sender_world_rank, accepted_route(*offered), "");
      return Status::ok();
    }
  }
  log_route_once(Direction::from, envelope.sender_world_rank, "staged, pulled", decline.reason.c_str());
  return start_staged_pull(decline.for_peer);
}

transport::Message Pull::message() const {
  return message_of(envelope_, transport::Peer{envelope_.sender_world_rank, envelope_.sender_node == this_node(),
                                               envelope_.sender_pid});
}

transport::Landing Pull::landing() {
  transport::Landing landing;
  landing.bytes = packed_.empty() ? target_->contiguous_destination() : packed_.data();
  landing.delivered = delivered_;
  if (target_->on_device() && packed_.empty()) {
    landing.owner = target_->owner();
  }
  return landing;
}

Status Pull::start_staged_pull(bool for_peer) {
  Reply pull;
  pull.kind = ReplyKind::pull;
  pull.bytes = delivered_;
  pull.chunk = transport::configured_chunk();
  pull.depth = static_cast<std::uint32_t>(transport::configured_depth());
  pull.every_message = for_peer ? 1 : 0;
  Status status = send_reply(pull);
  if (!status.is_ok()) {
    return status;
  }
  CUMPI_LOG(debug, "pulling message %llu (%zu bytes) from rank %d through the staged pipeline",
            static_cast<unsigned long long>(envelope_.message_id), delivered_, envelope_.sender_world_rank);
  transport_ = &transport::staged_transport();
  const transport::PipelineShape shape{delivered_, static_cast<std::size_t>(pull.chunk), static_cast<int>(pull.depth)};
  transfer_ = transport::staged_transport().start_pull_receive(message(), landing(), shape, &status);
  return status;
}

Status Pull::send_reply(const Reply& reply) const {
  return from_mpi(real_mpi().Send(&reply, static_cast<int>(sizeof(reply)), MPI_BYTE, envelope_.sender_world_rank,
                                  reply_tag(envelope_.message_id), channel().comm));
}

bool Pull::advance(Status* error) {
  if (finished_) {
    return true;
  }
  if (transfer_ == nullptr) {  // start() failed and said so; FIN still goes
    finish(error);
    return true;
  }
  const bool done = transfer_->advance(error);
  if (done && error->is_ok() && !packed_.empty()) {
    *error = target_->deliver_packed(packed_.data(), packed_.size());
  }
  if (done) {
    finish(error);
  }
  return done;
}

// FIN goes even after a failure: the sender must not wait forever.
void Pull::finish(Status* error) {
  finished_ = true;
  Status sent = send_reply(Reply{});
  if (error->is_ok()) {
    *error = std::move(sent);
  }
  if (stats::enabled() && transport_ != nullptr) {
    stats::record(transport_->route(), delivered_, stats::now_seconds() - started_, stats::Side::received);
  }
}

Status pull_now(const Envelope& envelope, ReceiveTarget* target, MPI_Status* status) {
  Pull pull;
  Status error = pull.start(envelope, target);
  while (error.is_ok() && !pull.advance(&error)) {
    transport::transports().progress_all();
  }
  real_mpi().Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(pull.reported_count()));
  return error.is_ok() && pull.truncated() ? truncated_receive(pull.delivered()) : error;
}

Status truncated_receive(std::size_t delivered) {
  return Status::error(StatusCode::truncated, "message truncated: it is larger than the receive buffer of " +
                                                  std::to_string(delivered) + " bytes");
}

std::size_t Pull::reported_count() const {
  return truncated_ ? truncated_count(static_cast<std::size_t>(envelope_.bytes), delivered_) : delivered_;
}

namespace {
bool g_truncation_counts_message = true;
}  // namespace

std::size_t truncated_count(std::size_t message_bytes, std::size_t capacity) {
  return g_truncation_counts_message ? message_bytes : capacity;
}

// Two bytes into a one-byte receive, to this rank itself on a duplicate of
// MPI_COMM_SELF that returns errors.
void learn_truncated_count() {
  const RealMpi& mpi = real_mpi();
  MPI_Comm self = MPI_COMM_NULL;
  if (mpi.Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS) {
    return;
  }
  mpi.Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  const char message[2] = {1, 2};
  char room[1] = {};
  MPI_Request sent = MPI_REQUEST_NULL;
  MPI_Status status{};
  if (mpi.Isend(message, 2, MPI_BYTE, 0, 0, self, &sent) == MPI_SUCCESS) {
    mpi.Recv(room, 1, MPI_BYTE, 0, 0, self, &status);
    mpi.Wait(&sent, MPI_STATUS_IGNORE);
    g_truncation_counts_message = status_bytes(status) == 2;
  }
  mpi.Comm_free(&self);
}

}  // namespace cumpi::protocol
