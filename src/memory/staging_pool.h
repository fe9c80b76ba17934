// Page-locked host memory for staged copies, pooled: pinning costs
// milliseconds (2.3 ms for 4 MiB on an H200 host), so it is never done per
// message. Blocks come in power-of-two size classes; released blocks are kept
// for reuse up to CUMPI_PINNED_POOL_LIMIT bytes, larger ones are freed.
//
// Blocks are our own mmap()ed memory, registered with the driver, not
// cuMemHostAlloc()ed: if the application resets its device, the registration
// dies with the context but the memory stays valid.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "memory/device_memory.h"
#include "runtime/status.h"

namespace cumpi::memory {

struct PinnedBlock {
  char* data = nullptr;
  std::size_t capacity = 0;
  bool pinned = false;
};

class StagingPool {
 public:
  StagingPool(DeviceMemory& memory, std::size_t retain_limit) : memory_(memory), retain_limit_(retain_limit) {}
  ~StagingPool() { clear(); }
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A block of at least `bytes`, pinned in owner's context where possible.
  Status acquire(std::size_t bytes, const PointerInfo& owner, PinnedBlock* block);
  void release(PinnedBlock block);
  // Unpins and unmaps every retained block.
  void clear();

  std::size_t retained_bytes() const;
  // Blocks mapped so far: reuse keeps this from growing.
  std::size_t blocks_created() const;

  static std::size_t size_class(std::size_t bytes);

 private:
  void destroy(PinnedBlock block);

  DeviceMemory& memory_;
  std::size_t retain_limit_;
  mutable std::mutex mutex_;
  std::vector<PinnedBlock> free_blocks_;
  std::size_t retained_bytes_ = 0;
  std::size_t blocks_created_ = 0;
  bool warned_about_pinning_ = false;
};

// The process's pool, over this library variant's device memory (which pins it).
StagingPool& staging_pool();

// Asks for transparent huge pages on a large block of host memory of our
// own: first touching (or the driver pinning) hundreds of megabytes page by
// page costs seconds on a virtual machine (a 2 GiB message staged into a
// fresh block: most of its time). Advice only; small blocks are left alone.
void advise_huge_pages(void* memory, std::size_t capacity);

}  // namespace cumpi::memory
