#include "memory/staging_pool.h"

#include <sys/mman.h>

#include "runtime/config.h"
#include "runtime/log.h"

namespace cumpi::memory {

namespace {
constexpr std::size_t kSmallestBlock = 64 * 1024;
}  // namespace

void advise_huge_pages(void* memory, std::size_t capacity) {
  constexpr std::size_t kHugePageBlock = 4u << 20;
  if (capacity >= kHugePageBlock) {
    madvise(memory, capacity, MADV_HUGEPAGE);
  }
}

std::size_t StagingPool::size_class(std::size_t bytes) {
  std::size_t capacity = kSmallestBlock;
  while (capacity < bytes) {
    capacity *= 2;
  }
  return capacity;
}

Status StagingPool::acquire(std::size_t bytes, const PointerInfo& owner, PinnedBlock* block) {
  const std::size_t capacity = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < free_blocks_.size(); ++i) {
      if (free_blocks_[i].capacity == capacity) {
        *block = free_blocks_[i];
        free_blocks_[i] = free_blocks_.back();
        free_blocks_.pop_back();
        retained_bytes_ -= capacity;
        return Status::ok();
      }
    }
    ++blocks_created_;
  }
  void* memory = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return Status::error(StatusCode::out_of_memory,
                         "cannot map " + std::to_string(capacity) + " bytes of host memory for staging");
  }
  advise_huge_pages(memory, capacity);
  PinnedBlock fresh{static_cast<char*>(memory), capacity, false};
  const Status pinned = memory_.pin(fresh.data, capacity, owner);
  fresh.pinned = pinned.is_ok();
  if (!fresh.pinned) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!warned_about_pinning_) {
      warned_about_pinning_ = true;
      CUMPI_LOG(warn, "staging memory stays pageable, copies will be slower: %s", pinned.message().c_str());
    }
  }
  *block = fresh;
  return Status::ok();
}

void StagingPool::release(PinnedBlock block) {
  if (block.data == nullptr) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (retained_bytes_ + block.capacity <= retain_limit_) {
      retained_bytes_ += block.capacity;
      free_blocks_.push_back(block);
      return;
    }
  }
  destroy(block);
}

void StagingPool::clear() {
  std::vector<PinnedBlock> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_blocks_);
    retained_bytes_ = 0;
  }
  for (const PinnedBlock& block : blocks) {
    destroy(block);
  }
}

std::size_t StagingPool::retained_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return retained_bytes_;
}

std::size_t StagingPool::blocks_created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_created_;
}

void StagingPool::destroy(PinnedBlock block) {
  if (block.pinned) {
    memory_.unpin(block.data);
  }
  munmap(block.data, block.capacity);
}

StagingPool& staging_pool() {
  static StagingPool* pool = new StagingPool(device_memory(), config().pinned_pool_limit);  // lives until exit
  return *pool;
}

}  // namespace cumpi::memory
