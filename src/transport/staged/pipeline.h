// The staged pipeline (DESIGN §4): a large device message moves in chunks
// over the private channel through pinned host memory. The sender's
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
  MPI_Request request = MPI_REQUEST_NULL;
};

class PipelineSender {
 public:
  PipelineSender() = default;
  ~PipelineSender();
  PipelineSender(const PipelineSender&) = delete;
  PipelineSender& operator=(const PipelineSender&) = delete;

  // Sends `shape.bytes` from device memory `source` to world rank `receiver`.
  Status start(const char* source, const memory::PointerInfo& owner, PipelineShape shape, MPI_Comm comm, int receiver,
               int tag);
  // True once every chunk was sent; an error ends the pipeline.
  bool advance(Status* error);
  // Copies every chunk to host and posts its send before returning (the
  // depth must cover all chunks): from then on MPI alone moves the data.
  Status push_all();

 private:
  const char* source_ = nullptr;
  memory::PointerInfo owner_;
  PipelineShape shape_;
  MPI_Comm comm_{};
  int receiver_ = -1;
  int tag_ = 0;
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

  // Receives `shape.bytes` from world rank `sender` into `destination`:
  // device memory of `owner` (through pinned chunks), or host memory when
  // owner.kind is host (chunks land in place). Only the first `keep` bytes
  // are kept (a truncated receive); the rest is received and dropped.
  Status start(char* destination, const memory::PointerInfo& owner, PipelineShape shape, std::size_t keep,
               MPI_Comm comm, int sender, int tag);
  bool advance(Status* error);

 private:
  char* destination_ = nullptr;
  memory::PointerInfo owner_;
  bool to_device_ = false;
  bool slotted_ = false;  // chunks land in slots first, not in place
  std::size_t keep_ = 0;
  PipelineShape shape_;
  MPI_Comm comm_{};
  int sender_ = -1;
  int tag_ = 0;
  std::size_t next_post_ = 0;
  std::size_t done_ = 0;
  std::vector<PipelineSlot> slots_;
};

}  // namespace cumpi::transport
