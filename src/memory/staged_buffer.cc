#include "memory/staged_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "memory/copy_engine.h"

namespace cumpi::memory {

namespace {

// Landing spans from this size on are reserved lazily.
constexpr std::size_t kLazyLandingBytes = 1u << 20;

// A stand-in for the host pointer of an empty staged span: MPI never reads it.
char g_empty_span;

Status freed_device_memory(const void* buffer) {
  char text[200];
  std::snprintf(text, sizeof(text),
                "buffer %p lies in device memory that was freed: the device no longer backs it (cudaFree before "
                "the MPI call?)",
                buffer);
  return Status::error(StatusCode::bad_buffer, text);
}

Status outside_allocation(const void* buffer, ByteSpan span, const PointerInfo& owner) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "device buffer %p: the call touches %zu bytes at offset %" PRId64
                ", outside its allocation of %zu bytes at 0x%" PRIxPTR,
                buffer, span.bytes, span.offset, owner.size, owner.base);
  return Status::error(StatusCode::bad_buffer, text);
}

// Lazily reserved landing regions kept for reuse: a receive that took an
// envelope touched one page of its region, and mapping and unmapping one
// per message costs more than the rest of the receive. Regions come in
// power-of-two sizes; those that held a plain message give their pages back
// before they are kept.
class LazyRegions {
 public:
  Status take(std::size_t bytes, PinnedBlock* block) {
    std::size_t capacity = kLazyLandingBytes;
    while (capacity < bytes) {
      capacity *= 2;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < kept_.size(); ++i) {
        if (kept_[i].capacity == capacity) {
          *block = kept_[i];
          kept_[i] = kept_.back();
          kept_.pop_back();
          return Status::ok();
        }
      }
    }
    void* memory = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) {
      return Status::error(StatusCode::out_of_memory,
                           "cannot reserve " + std::to_string(capacity) + " bytes of host memory for a receive");
    }
    advise_huge_pages(memory, capacity);
    *block = PinnedBlock{static_cast<char*>(memory), capacity, false};
    return Status::ok();
  }

  void give_back(PinnedBlock block, std::size_t touched_bytes) {
    if (touched_bytes > kOnePage) {
      madvise(block.data, block.capacity, MADV_DONTNEED);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (kept_.size() < kMostKept) {
        kept_.push_back(block);
        return;
      }
    }
    munmap(block.data, block.capacity);
  }

 private:
  static constexpr std::size_t kOnePage = 4096;
  static constexpr std::size_t kMostKept = 64;  // a window of large receives
  std::mutex mutex_;
  std::vector<PinnedBlock> kept_;
};

LazyRegions& lazy_regions() {
  static LazyRegions* regions = new LazyRegions();  // lives until exit
  return *regions;
}

}  // namespace

StagedBuffer::~StagedBuffer() { release(); }

StagedBuffer::StagedBuffer(StagedBuffer&& other) noexcept { *this = std::move(other); }

StagedBuffer& StagedBuffer::operator=(StagedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    mpi_pointer_ = std::exchange(other.mpi_pointer_, nullptr);
    device_begin_ = std::exchange(other.device_begin_, nullptr);
    span_bytes_ = std::exchange(other.span_bytes_, 0);
    owner_ = other.owner_;
    block_ = std::exchange(other.block_, PinnedBlock{});
    lazy_ = std::exchange(other.lazy_, false);
    touched_bytes_ = std::exchange(other.touched_bytes_, 0);
  }
  return *this;
}

void StagedBuffer::release() {
  PinnedBlock block = std::exchange(block_, PinnedBlock{});
  if (std::exchange(lazy_, false)) {
    lazy_regions().give_back(block, std::exchange(touched_bytes_, 0));
  } else {
    staging_pool().release(block);
  }
  device_begin_ = nullptr;
}

StagedBuffer StagedBuffer::unchanged(const void* buffer) {
  StagedBuffer untouched;
  untouched.mpi_pointer_ = const_cast<void*>(buffer);
  return untouched;
}

Status StagedBuffer::for_reading(const void* buffer, ByteSpan span, const PointerInfo& owner, StagedBuffer* out) {
  return stage(buffer, span, owner, true, false, out);
}

Status StagedBuffer::for_writing(void* buffer, ByteSpan span, const PointerInfo& owner, bool preserve,
                                 StagedBuffer* out) {
  return stage(buffer, span, owner, preserve, false, out);
}

Status StagedBuffer::for_landing(void* buffer, ByteSpan span, const PointerInfo& owner, bool preserve,
                                 StagedBuffer* out) {
  return stage(buffer, span, owner, preserve, !preserve && span.bytes >= kLazyLandingBytes, out);
}

Status StagedBuffer::stage(const void* buffer, ByteSpan span, const PointerInfo& owner, bool copy_in, bool lazy,
                           StagedBuffer* out) {
  StagedBuffer staged;
  staged.mpi_pointer_ = const_cast<void*>(buffer);
  if (owner.kind != MemoryKind::device) {
    *out = std::move(staged);
    return Status::ok();
  }
  if (owner.freed) {
    return freed_device_memory(buffer);
  }
  char* device_begin = static_cast<char*>(const_cast<void*>(buffer)) + span.offset;
  const auto first = reinterpret_cast<std::uintptr_t>(device_begin);
  if (!span.empty() && (first < owner.base || first + span.bytes > owner.base + owner.size)) {
    return outside_allocation(buffer, span, owner);
  }
  staged.owner_ = owner;
  staged.device_begin_ = device_begin;
  staged.span_bytes_ = span.bytes;
  if (span.empty()) {
    staged.mpi_pointer_ = &g_empty_span;
    *out = std::move(staged);
    return Status::ok();
  }
  Status status = lazy ? lazy_regions().take(span.bytes, &staged.block_)
                       : staging_pool().acquire(span.bytes, owner, &staged.block_);
  if (!status.is_ok()) {
    return status;
  }
  staged.lazy_ = lazy;
  // MPI addresses the data from the user's pointer, span.offset before the
  // span's first byte; the host copy keeps that geometry.
  staged.mpi_pointer_ = staged.block_.data - span.offset;
  if (copy_in) {
    status = copy_engine().copy_to_host(staged.block_.data, device_begin, span.bytes, owner);
    if (!status.is_ok()) {
      return status;
    }
  }
  *out = std::move(staged);
  return Status::ok();
}

Status StagedBuffer::copy_back(std::size_t bytes) {
  if (!staged() || block_.data == nullptr) {
    return Status::ok();
  }
  touched_bytes_ = std::max(touched_bytes_, bytes);
  return copy_engine().copy_to_device(device_begin_, block_.data, std::min(bytes, span_bytes_), owner_);
}

Status StagedBuffer::refresh_from_device() {
  if (!staged() || block_.data == nullptr) {
    return Status::ok();
  }
  return copy_engine().copy_to_host(block_.data, device_begin_, span_bytes_, owner_);
}

Status span_of_call(MPI_Datatype type, std::int64_t count, TypeLayout* layout, ByteSpan* span) {
  Status status = query_layout(type, layout);
  if (status.is_ok()) {
    *span = span_of(*layout, count);
  }
  return status;
}

}  // namespace cumpi::memory
