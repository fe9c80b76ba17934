// The staged pipeline (DESIGN §4): a large device message moves in chunks
// through pinned host memory, over a chunk wire: the private channel (the
// staged transport) or UCX (the ucx transport, where UCX cannot touch device
// memory). The sender's
// device->host copy of chunk i+1 overlaps the transfer of chunk i, and the
// receiver's host->device copies overlap the transfers too. Both sides are
// state machines advanced by the progress engine; neither ever blocks.
#pragma once

#include <cstddef>
#include <vector>

#include "memory/copy_engine.h"
#include "memory/staging_pool.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::transport {

struct PipelineShape {
  std::size_t bytes = 0;
  std::size_t chunk = 0;
  int depth = 1;

  std::size_t chunks() const { return chunk == 0 ? 0 : (bytes + chunk - 1) / chunk; }
  std::size_t length_of(std::size_t index) const {
    const std::size_t begin = index * chunk;
    return bytes - begin < chunk ? bytes - begin : chunk;
  }
};

// CUMPI_PIPELINE_CHUNK and CUMPI_PIPELINE_DEPTH, within sane bounds.
std::size_t configured_chunk();
int configured_depth();

// One chunk buffer and what it is doing.
struct PipelineSlot {
  enum class State { idle, copying, transferring };
  State state = State::idle;
  std::size_t chunk = 0;
  memory::PinnedBlock block;
  std::vector<char> scratch;  // host chunks of a truncated message
  memory::CopyTicket ticket;
  MPI_Request request = MPI_REQUEST_NULL;  // an MPI wire's transfer
  void* handle = nullptr;                  // another wire's transfer
};

// How a pipeline's chunks travel between its two ends: sends and receives
// of one chunk each (slot.chunk says which), never blocking.
class ChunkWire {
 public:
  virtual ~ChunkWire() = default;
  virtual Status send(PipelineSlot& slot, const char* data, std::size_t bytes) = 0;
  virtual Status receive(PipelineSlot& slot, char* into, std::size_t bytes) = 0;
  // Whether the slot's transfer completed (false with an error that ended it).
  virtual bool done(PipelineSlot& slot, Status* error) = 0;
  // Gives up the slot's transfer, if any is posted.
  virtual void cancel(PipelineSlot& slot) = 0;
};

// Chunks as MPI messages on `comm` with `tag`, to or from world rank `peer`:
// in order, so each chunk matches the receive posted for it.
class MpiChunkWire final : public ChunkWire {
 public:
  MpiChunkWire(MPI_Comm comm, int peer, int tag) : comm_(comm), peer_(peer), tag_(tag) {}
  Status send(PipelineSlot& slot, const char* data, std::size_t bytes) override;
  Status receive(PipelineSlot& slot, char* into, std::size_t bytes) override;
  bool done(PipelineSlot& slot, Status* error) override;
  void cancel(PipelineSlot& slot) override;

 private:
  MPI_Comm comm_;
  int peer_;
  int tag_;
};

class PipelineSender {
 public:
  PipelineSender() = default;
  ~PipelineSender();
  PipelineSender(const PipelineSender&) = delete;
  PipelineSender& operator=(const PipelineSender&) = delete;

  // Sends `shape.bytes` from device memory `source` over `wire`, which
  // outlives the pipeline.
  Status start(const char* source, const memory::PointerInfo& owner, PipelineShape shape, ChunkWire* wire);
  // True once every chunk was sent; an error ends the pipeline.
  bool advance(Status* error);
  // Copies every chunk to host and posts its send before returning (the
  // depth must cover all chunks): from then on MPI alone moves the data.
  Status push_all();

 private:
  const char* source_ = nullptr;
  memory::PointerInfo owner_;
  PipelineShape shape_;
  ChunkWire* wire_ = nullptr;
  std::size_t next_copy_ = 0;
  std::size_t next_send_ = 0;
  std::size_t sent_ = 0;
  std::vector<PipelineSlot> slots_;
};

class PipelineReceiver {
 public:
  PipelineReceiver() = default;
  ~PipelineReceiver();
  PipelineReceiver(const PipelineReceiver&) = delete;
  PipelineReceiver& operator=(const PipelineReceiver&) = delete;

  // Receives `shape.bytes` over `wire` (which outlives the pipeline) into `destination`:
  // device memory of `owner` (through pinned chunks), or host memory when
  // owner.kind is host (chunks land in place). Only the first `keep` bytes
  // are kept (a truncated receive); the rest is received and dropped.
  Status start(char* destination, const memory::PointerInfo& owner, PipelineShape shape, std::size_t keep,
               ChunkWire* wire);
  bool advance(Status* error);

 private:
  char* destination_ = nullptr;
  memory::PointerInfo owner_;
  bool to_device_ = false;
  bool slotted_ = false;  // chunks land in slots first, not in place
  std::size_t keep_ = 0;
  PipelineShape shape_;
  ChunkWire* wire_ = nullptr;
  std::size_t next_post_ = 0;
  std::size_t done_ = 0;
  std::vector<PipelineSlot> slots_;
};

}  // namespace cumpi::transport
