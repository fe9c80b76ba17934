#include "memory/freed_device_ranges.h"

#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>

namespace cumpi::memory {

namespace {

// Enough for the buffers of any MPI code; the oldest go first beyond it.
constexpr std::size_t kMostRanges = 4096;

class SeenRanges {
 public:
  void add(std::uintptr_t base, std::size_t size) {
    if (base == 0 || size == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = ends_.find(base);
    if (found != ends_.end() && found->second == base + size) return;
    if (ends_.size() >= kMostRanges) ends_.erase(ends_.begin());
    ends_[base] = base + size;
    widen(base, base + size);
  }

  bool contains(std::uintptr_t address) {
    // Two loads and compares for the host memory outside every range seen.
    if (address < lowest_.load(std::memory_order_relaxed) || address >= highest_.load(std::memory_order_relaxed)) {
      return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto after = ends_.upper_bound(address);
    if (after == ends_.begin()) return false;
    --after;
    return address < after->second;
  }

 private:
  void widen(std::uintptr_t begin, std::uintptr_t end) {
    if (begin < lowest_.load(std::memory_order_relaxed)) lowest_.store(begin, std::memory_order_relaxed);
    if (end > highest_.load(std::memory_order_relaxed)) highest_.store(end, std::memory_order_relaxed);
  }

  std::mutex mutex_;
  std::map<std::uintptr_t, std::uintptr_t> ends_;  // base -> end
  std::atomic<std::uintptr_t> lowest_{UINTPTR_MAX};
  std::atomic<std::uintptr_t> highest_{0};
};

SeenRanges& seen() {
  static SeenRanges* ranges = new SeenRanges();  // lives until exit
  return *ranges;
}

// The kernel copies one byte from our own address space: EFAULT when the
// address is not mapped readable, with no signal.
bool cpu_can_read(const void* pointer) {
  char byte = 0;
  iovec local{&byte, 1};
  iovec remote{const_cast<void*>(pointer), 1};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

}  // namespace

void saw_device_allocation(std::uintptr_t base, std::size_t size) { seen().add(base, size); }

bool in_freed_device_allocation(const void* pointer) {
  return seen().contains(reinterpret_cast<std::uintptr_t>(pointer)) && !cpu_can_read(pointer);
}

}  // namespace cumpi::memory
