// One buffer argument of one MPI call, as MPI gets to see it: a host buffer
// as it is, a device buffer mirrored in pinned host memory (the staged path,
// DESIGN §2.5: correct for every datatype, op and communicator).
#pragma once

#include <cstddef>

#include "memory/datatype_layout.h"
#include "memory/device_memory.h"
#include "memory/staging_pool.h"
#include "runtime/status.h"

namespace cumpi::memory {

class StagedBuffer {
 public:
  StagedBuffer() = default;
  ~StagedBuffer();
  StagedBuffer(StagedBuffer&& other) noexcept;
  StagedBuffer& operator=(StagedBuffer&& other) noexcept;
  StagedBuffer(const StagedBuffer&) = delete;
  StagedBuffer& operator=(const StagedBuffer&) = delete;

  // `owner` is where the span lives, as memory::locate answered for this
  // call (classifier.h): host memory is handed on as it is; device memory is
  // staged, and a span outside its allocation is a bad buffer.

  // A buffer MPI will read: device bytes of `span` are copied to host now.
  static Status for_reading(const void* buffer, ByteSpan span, const PointerInfo& owner, StagedBuffer* out);
  // A buffer MPI will write. With `preserve`, the device bytes are copied to
  // host first, so that a whole-span copy-back rewrites holes and unwritten
  // bytes with their own values (and IN_PLACE inputs arrive).
  static Status for_writing(void* buffer, ByteSpan span, const PointerInfo& owner, bool preserve, StagedBuffer* out);

  // The landing buffer of a device receive: like for_writing, but a large
  // span without holes is reserved lazily (anonymous memory, untouched pages
  // cost nothing), since a rendezvous envelope fills only its first page.
  static Status for_landing(void* buffer, ByteSpan span, const PointerInfo& owner, bool preserve, StagedBuffer* out);

  // A buffer argument MPI does not use in this call (a receive buffer off
  // the root, MPI_IN_PLACE): handed on untouched, never classified.
  static StagedBuffer unchanged(const void* buffer);

  // The pointer to hand to MPI in place of the user's.
  void* mpi_pointer() const { return mpi_pointer_; }
  bool staged() const { return device_begin_ != nullptr; }
  // The span's first byte on the device, and the owner.
  char* device_span_begin() const { return device_begin_; }
  const PointerInfo& owner() const { return owner_; }
  std::size_t staged_bytes() const { return staged() ? span_bytes_ : 0; }

  // Copies the first `bytes` of the span (all of it at most) back to the
  // device; nothing for host buffers.
  Status copy_back(std::size_t bytes);
  Status copy_back_all() { return copy_back(span_bytes_); }
  // Copies the device bytes to host again (each MPI_Start of a persistent
  // send re-reads the buffer).
  Status refresh_from_device();

 private:
  static Status stage(const void* buffer, ByteSpan span, const PointerInfo& owner, bool copy_in, bool lazy,
                      StagedBuffer* out);
  void release();

  void* mpi_pointer_ = nullptr;
  char* device_begin_ = nullptr;  // first byte of the span on the device
  std::size_t span_bytes_ = 0;
  PointerInfo owner_;
  PinnedBlock block_;
  bool lazy_ = false;              // block_ is an anonymous mapping of ours, not the pool's
  std::size_t touched_bytes_ = 0;  // the most copied back: what MPI wrote there
};

// Layout and span of `count` elements of `type` in one call.
Status span_of_call(MPI_Datatype type, std::int64_t count, TypeLayout* layout, ByteSpan* span);

}  // namespace cumpi::memory
