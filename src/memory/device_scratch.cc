#include "memory/device_scratch.h"

#include <algorithm>

#include "runtime/config.h"

namespace cumpi::memory {

Status DeviceScratch::acquire(std::size_t bytes, const PointerInfo& owner, void** device) {
  *device = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    Block& block = blocks_[i];
    if (block.in_use || block.owner.context != owner.context || block.bytes < bytes) {
      continue;
    }
    if (!still_there(block)) {
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));  // gone with its context: nothing to free
      break;
    }
    block.in_use = true;
    *device = block.device;
    return Status::ok();
  }
  Block block;
  block.bytes = std::max<std::size_t>(bytes, 1);
  block.owner = owner;
  Status status = memory_.allocate(block.bytes, owner, &block.device);
  if (!status.is_ok()) {
    return status;
  }
  block.buffer_id = memory_.query(block.device).buffer_id;
  block.in_use = true;
  ++allocations_;
  blocks_.push_back(block);
  *device = block.device;
  return Status::ok();
}

// Keeps the block where it is small enough and its context keeps no other
// free one (the smaller goes).
void DeviceScratch::give_back(void* device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto given = std::find_if(blocks_.begin(), blocks_.end(), [&](const Block& block) { return block.device == device; });
  if (given == blocks_.end()) {
    return;
  }
  given->in_use = false;
  auto other = std::find_if(blocks_.begin(), blocks_.end(), [&](const Block& block) {
    return &block != &*given && !block.in_use && block.owner.context == given->owner.context;
  });
  auto dropped = given->bytes > keep_limit_ ? given
                 : other == blocks_.end()   ? blocks_.end()
                 : other->bytes < given->bytes ? other
                                                : given;
  if (dropped != blocks_.end()) {
    free_block(*dropped);
    blocks_.erase(dropped);
  }
}

void DeviceScratch::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Block> kept;
  for (const Block& block : blocks_) {
    if (block.in_use) {
      kept.push_back(block);
    } else {
      free_block(block);
    }
  }
  blocks_.swap(kept);
}

std::size_t DeviceScratch::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t bytes = 0;
  for (const Block& block : blocks_) {
    bytes += block.in_use ? 0 : block.bytes;
  }
  return bytes;
}

std::size_t DeviceScratch::allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocations_;
}

bool DeviceScratch::still_there(const Block& block) {
  const PointerInfo now = memory_.query(block.device);
  return now.kind == MemoryKind::device && !now.freed && now.buffer_id == block.buffer_id;
}

// Only a block still there is freed: the driver may have given a dead
// block's addresses to the application since.
void DeviceScratch::free_block(const Block& block) {
  if (still_there(block)) {
    memory_.free_allocation(block.device, block.owner);
  }
}

DeviceScratch& device_scratch() {
  static auto* scratch = new DeviceScratch(device_memory(), config().device_scratch_limit);  // lives until exit
  return *scratch;
}

}  // namespace cumpi::memory
