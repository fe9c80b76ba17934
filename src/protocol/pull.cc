#include "protocol/pull.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "protocol/channel.h"
#include "protocol/host_receives.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"

namespace cumpi::protocol {

namespace {

// The route to each peer is logged once, at info; true the first time.
bool log_route_once(int sender, const char* route, const std::string& reason) {
  static std::mutex mutex;
  static std::set<std::pair<int, std::string>> logged;
  std::lock_guard<std::mutex> lock(mutex);
  if (!logged.emplace(sender, route).second) {
    return false;
  }
  CUMPI_LOG(info, "rendezvous messages from rank %d take %s%s%s", sender, route, reason.empty() ? "" : ": ",
            reason.c_str());
  return true;
}

}  // namespace

Pull::~Pull() {
  if (mapping_ != nullptr) {
    Status ignored = memory::backend().wait_copy(&ticket_);
    (void)ignored;
    transport::ipc_cache().release(mapping_);
  }
}

Status Pull::start(const Envelope& envelope, ReceiveTarget* target) {
  envelope_ = envelope;
  target_ = target;
  delivered_ = static_cast<std::size_t>(std::min<std::uint64_t>(envelope.bytes, target->capacity()));
  truncated_ = envelope.bytes > target->capacity();
  // A copy into host memory that a pending direct receive overlaps would
  // race with MPI writing that receive (an envelope it takes could be
  // overwritten): the message lands here first and is copied in at the end,
  // after that receive was looked at.
  if (!target->on_device() && target->contiguous() &&
      overlaps_direct_receive(target->host_first(), target->host_last())) {
    packed_.resize(delivered_);
  }
  started_ = stats::enabled() ? stats::now_seconds() : 0.0;
  std::string reason;
  if (envelope.pushed != 0) {
    route_ = Route::pipeline;
    log_route_once(envelope.sender_world_rank, "the staged pipeline, pushed by the sender", "");
    return start_pipeline();
  }
  if (start_ipc(&reason)) {
    route_ = Route::ipc;
    if (log_route_once(envelope.sender_world_rank, "CUDA IPC", "") &&
        memory::backend().shares_gpu_without_mps(envelope.ipc, ticket_.context)) {
      CUMPI_LOG(info,
                "rank %d shares this GPU without MPS: each switch between the two processes' work costs the GPU "
                "a time slice (about 150 us on an H200), which bounds small-message latency; run "
                "nvidia-cuda-mps-control -d before the job to share one context",
                envelope.sender_world_rank);
    }
    return Status::ok();
  }
  log_route_once(envelope.sender_world_rank, "the staged pipeline", reason);
  route_ = Route::pipeline;
  return start_pipeline();
}

bool Pull::start_ipc(std::string* decline_reason) {
  if (!config().transports.allows(kTransportIpc)) {
    *decline_reason = "CUMPI_TRANSPORTS excludes ipc";
    peer_declined_ = true;
    return false;
  }
  if (envelope_.sender_node != channel().node) {
    *decline_reason = "the sender is on another node";
    return false;
  }
  if (envelope_.has_ipc == 0) {
    *decline_reason = "the sender's buffer cannot be exported (pool or VMM memory)";
    return false;
  }
  // A host buffer takes the copy in the thread's current context.
  memory::PointerInfo destination = target_->owner();
  if (!target_->on_device()) {
    destination.context = memory::backend().current_context();
  }
  if (!packed_.empty()) {
    destination = memory::PointerInfo{};
    destination.context = memory::backend().current_context();
  }
  if (!target_->contiguous() || destination.context == nullptr) {
    *decline_reason = "";  // non-contiguous receive buffers, no CUDA context: by message, not by peer
    return false;
  }
  if (envelope_.ipc.offset + delivered_ > envelope_.ipc.allocation_bytes) {
    *decline_reason = "the envelope's buffer lies outside its allocation";
    return false;
  }
  Status status = transport::ipc_cache().acquire(envelope_.sender_world_rank, envelope_.sender_pid,
                                                 envelope_.ipc, destination, &mapping_);
  if (!status.is_ok()) {
    mapping_ = nullptr;
    *decline_reason = status.message();
    peer_declined_ = status.code() == StatusCode::unreachable;
    return false;
  }
  // Queued: the pulls a progress sweep starts reach the GPU as one batch.
  // The source is a mapping of the sender's device memory.
  memory::backend().queue_copy(this->destination(), static_cast<const char*>(mapping_->base) + envelope_.ipc.offset,
                               delivered_, destination.context, target_->on_device() && packed_.empty(), &ticket_);
  return true;
}

char* Pull::destination() { return packed_.empty() ? target_->contiguous_destination() : packed_.data(); }

Status Pull::start_pipeline() {
  if (target_->contiguous_destination() == nullptr) {
    packed_.resize(delivered_);
  }
  char* destination = this->destination();
  const memory::PointerInfo owner =
      target_->on_device() && packed_.empty() ? target_->owner() : memory::PointerInfo{};
  const int depth = transport::configured_depth();
  if (envelope_.pushed != 0) {
    // Every chunk comes; what does not fit a truncated receive is dropped.
    const transport::PipelineShape shape{static_cast<std::size_t>(envelope_.bytes),
                                         static_cast<std::size_t>(envelope_.chunk), depth};
    return pipeline_.start(destination, owner, shape, delivered_, channel().comm, envelope_.sender_world_rank,
                           chunk_tag(envelope_.message_id));
  }
  Reply pull;
  pull.kind = ReplyKind::pull;
  pull.bytes = delivered_;
  pull.chunk = transport::configured_chunk();
  pull.depth = static_cast<std::uint32_t>(depth);
  pull.every_message = peer_declined_ ? 1 : 0;
  Status status = send_reply(pull);
  if (!status.is_ok()) {
    return status;
  }
  CUMPI_LOG(debug, "pulling message %llu (%zu bytes) from rank %d through the staged pipeline",
            static_cast<unsigned long long>(envelope_.message_id), delivered_, envelope_.sender_world_rank);
  const transport::PipelineShape shape{delivered_, pull.chunk, depth};
  return pipeline_.start(destination, owner, shape, delivered_, channel().comm, envelope_.sender_world_rank,
                         chunk_tag(envelope_.message_id));
}

Status Pull::send_reply(const Reply& reply) const {
  return from_mpi(real_mpi().Send(&reply, static_cast<int>(sizeof(reply)), MPI_BYTE, envelope_.sender_world_rank,
                                  reply_tag(envelope_.message_id), channel().comm));
}

bool Pull::advance(Status* error) {
  if (finished_) {
    return true;
  }
  bool done = false;
  if (route_ == Route::ipc) {
    Status status = memory::backend().poll_copy(&ticket_, &done);
    if (!status.is_ok()) {
      *error = std::move(status);
      done = true;
    }
    if (done) {
      transport::ipc_cache().release(mapping_);
      mapping_ = nullptr;
      if (error->is_ok() && !packed_.empty()) {
        *error = target_->deliver_packed(packed_.data(), packed_.size());
      }
    }
  } else {
    done = pipeline_.advance(error) || !error->is_ok();
    if (done && error->is_ok() && !packed_.empty()) {
      *error = target_->deliver_packed(packed_.data(), packed_.size());
    }
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
  if (stats::enabled()) {
    stats::record(route_ == Route::ipc ? stats::Route::ipc : stats::Route::pipeline, delivered_,
                  stats::now_seconds() - started_);
  }
}

Status pull_now(const Envelope& envelope, ReceiveTarget* target, MPI_Status* status) {
  Pull pull;
  Status error = pull.start(envelope, target);
  while (error.is_ok() && !pull.advance(&error)) {
  }
  real_mpi().Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(pull.delivered()));
  return error.is_ok() && pull.truncated() ? truncated_receive(pull.delivered()) : error;
}

Status truncated_receive(std::size_t delivered) {
  return Status::error(StatusCode::truncated, "message truncated: it is larger than the receive buffer of " +
                                                  std::to_string(delivered) + " bytes");
}

}  // namespace cumpi::protocol
