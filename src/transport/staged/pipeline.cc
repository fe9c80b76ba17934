#include "transport/staged/pipeline.h"

#include <algorithm>
#include <cstring>

#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::transport {

namespace {

using State = PipelineSlot::State;

// Pinned chunk buffers, as many as can be in flight at once.
Status acquire_slots(const PipelineShape& shape, const memory::PointerInfo& owner, bool with_blocks,
                     std::vector<PipelineSlot>* slots) {
  const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(std::max(shape.depth, 1)), shape.chunks());
  slots->resize(count);
  for (PipelineSlot& slot : *slots) {
    if (with_blocks) {
      Status status = memory::staging_pool().acquire(shape.chunk, owner, &slot.block);
      if (!status.is_ok()) {
        return status;
      }
    }
  }
  return Status::ok();
}

// Cancels what is still posted and gives the chunk buffers back (after an
// error, or at destruction of a completed pipeline).
void release_slots(std::vector<PipelineSlot>& slots, ChunkWire* wire) {
  for (PipelineSlot& slot : slots) {
    if (wire != nullptr) {
      wire->cancel(slot);
    }
    if (slot.ticket.event != nullptr) {
      Status ignored = memory::copy_engine().wait_copy(&slot.ticket);
      (void)ignored;
    }
    memory::staging_pool().release(slot.block);
    slot.block = memory::PinnedBlock{};
  }
  slots.clear();
}

bool copy_done(PipelineSlot& slot, Status* error) {
  bool finished = false;
  Status status = memory::copy_engine().poll_copy(&slot.ticket, &finished);
  if (!status.is_ok()) {
    *error = std::move(status);
    return false;
  }
  return finished;
}

}  // namespace

Status MpiChunkWire::send(PipelineSlot& slot, const char* data, std::size_t bytes) {
  return from_mpi(real_mpi().Isend(data, static_cast<int>(bytes), MPI_BYTE, peer_, tag_, comm_, &slot.request));
}

Status MpiChunkWire::receive(PipelineSlot& slot, char* into, std::size_t bytes) {
  return from_mpi(real_mpi().Irecv(into, static_cast<int>(bytes), MPI_BYTE, peer_, tag_, comm_, &slot.request));
}

bool MpiChunkWire::done(PipelineSlot& slot, Status* error) {
  int flag = 0;
  const int rc = real_mpi().Test(&slot.request, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    *error = from_mpi(rc);
    return false;
  }
  return flag != 0;
}

void MpiChunkWire::cancel(PipelineSlot& slot) {
  if (slot.request != MPI_REQUEST_NULL) {
    real_mpi().Cancel(&slot.request);
    real_mpi().Wait(&slot.request, MPI_STATUS_IGNORE);
  }
}

std::size_t configured_chunk() { return std::max<std::size_t>(config().pipeline_chunk, 4096); }

int configured_depth() { return static_cast<int>(std::clamp<std::size_t>(config().pipeline_depth, 1, 64)); }

PipelineSender::~PipelineSender() { release_slots(slots_, wire_); }

Status PipelineSender::start(const char* source, const memory::PointerInfo& owner, PipelineShape shape,
                             ChunkWire* wire) {
  source_ = source;
  owner_ = owner;
  shape_ = shape;
  wire_ = wire;
  return acquire_slots(shape_, owner_, true, &slots_);
}

Status PipelineSender::push_all() {
  Status error;
  while (next_send_ < shape_.chunks()) {
    advance(&error);
    if (!error.is_ok()) {
      return error;
    }
  }
  return error;
}

bool PipelineSender::advance(Status* error) {
  const std::size_t chunks = shape_.chunks();
  for (PipelineSlot& slot : slots_) {
    if (slot.state == State::transferring && wire_->done(slot, error)) {
      slot.state = State::idle;
      ++sent_;
    }
    if (!error->is_ok()) {
      return false;
    }
    if (slot.state == State::idle && next_copy_ < chunks) {
      slot.chunk = next_copy_++;
      Status status = memory::copy_engine().start_copy(slot.block.data, source_ + slot.chunk * shape_.chunk,
                                                       shape_.length_of(slot.chunk), owner_.context, &slot.ticket);
      if (!status.is_ok()) {
        *error = std::move(status);
        return false;
      }
      slot.state = State::copying;
    }
  }
  // Chunks go out in order: the receiver posts its receives in order.
  for (bool moved = true; moved && next_send_ < chunks;) {
    moved = false;
    for (PipelineSlot& slot : slots_) {
      if (slot.state != State::copying || slot.chunk != next_send_ || !copy_done(slot, error)) {
        continue;
      }
      Status sent = wire_->send(slot, slot.block.data, shape_.length_of(slot.chunk));
      if (!sent.is_ok()) {
        *error = std::move(sent);
        return false;
      }
      slot.state = State::transferring;
      ++next_send_;
      moved = true;
    }
    if (!error->is_ok()) {
      return false;
    }
  }
  return sent_ == chunks;
}

PipelineReceiver::~PipelineReceiver() { release_slots(slots_, wire_); }

Status PipelineReceiver::start(char* destination, const memory::PointerInfo& owner, PipelineShape shape,
                               std::size_t keep, ChunkWire* wire) {
  destination_ = destination;
  owner_ = owner;
  to_device_ = owner.kind == memory::MemoryKind::device;
  keep_ = std::min(keep, shape.bytes);
  slotted_ = to_device_ || keep_ < shape.bytes;
  shape_ = shape;
  wire_ = wire;
  Status status = acquire_slots(shape_, owner_, to_device_, &slots_);
  if (status.is_ok() && slotted_ && !to_device_) {
    for (PipelineSlot& slot : slots_) {
      slot.scratch.resize(shape_.chunk);
    }
  }
  return status;
}

bool PipelineReceiver::advance(Status* error) {
  const std::size_t chunks = shape_.chunks();
  for (PipelineSlot& slot : slots_) {
    if (slot.state == State::transferring && wire_->done(slot, error)) {
      const std::size_t begin = slot.chunk * shape_.chunk;
      const std::size_t kept = begin < keep_ ? std::min(shape_.length_of(slot.chunk), keep_ - begin) : 0;
      if (to_device_ && kept != 0) {
        Status status =
            memory::copy_engine().start_copy(destination_ + begin, slot.block.data, kept, owner_.context, &slot.ticket);
        if (!status.is_ok()) {
          *error = std::move(status);
          return false;
        }
        slot.state = State::copying;
      } else {
        if (slotted_ && !to_device_ && kept != 0) {
          std::memcpy(destination_ + begin, slot.scratch.data(), kept);
        }
        slot.state = State::idle;
        ++done_;
      }
    }
    if (slot.state == State::copying && copy_done(slot, error)) {
      slot.state = State::idle;
      ++done_;
    }
    if (!error->is_ok()) {
      return false;
    }
    if (slot.state == State::idle && next_post_ < chunks) {
      slot.chunk = next_post_++;
      char* into =
          to_device_ ? slot.block.data : (slotted_ ? slot.scratch.data() : destination_ + slot.chunk * shape_.chunk);
      Status posted = wire_->receive(slot, into, shape_.length_of(slot.chunk));
      if (!posted.is_ok()) {
        *error = std::move(posted);
        return false;
      }
      slot.state = State::transferring;
    }
  }
  return done_ == chunks;
}

}  // namespace cumpi::transport
