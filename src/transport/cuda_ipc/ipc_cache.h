// The receiver's cache of peer allocations mapped through CUDA IPC (DESIGN
// §4). Opening a handle costs about 94 µs on an H200, so a mapping is kept
// and reused, keyed by (sender, CU_POINTER_ATTRIBUTE_BUFFER_ID, context):
// buffer ids are never reused, so a freed and reallocated address can never
// hit a stale mapping. The cache is bounded in entries and bytes (a mapping
// keeps a freed peer buffer's memory alive); the least recently used
// mappings without copies in flight are closed first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>

#include "memory/device_memory.h"
#include "runtime/status.h"
#include "transport/cuda_ipc/ipc_driver.h"

namespace cumpi::transport {

struct IpcMapping {
  int sender = -1;
  std::uint64_t buffer_id = 0;
  void* context = nullptr;
  void* base = nullptr;  // the peer allocation's first byte, mapped here
  std::size_t bytes = 0;
  int in_flight = 0;  // copies reading from it
};

struct IpcCacheCounters {
  std::size_t open_mappings = 0;
  std::size_t mapped_bytes = 0;
  std::size_t opens = 0;
  std::size_t hits = 0;
  std::size_t evictions = 0;
};

class IpcCache {
 public:
  IpcCache(IpcDriver& driver, std::size_t max_entries, std::size_t max_bytes)
      : driver_(driver), max_entries_(max_entries), max_bytes_(max_bytes) {}
  ~IpcCache() { clear(); }
  IpcCache(const IpcCache&) = delete;
  IpcCache& operator=(const IpcCache&) = delete;

  // The mapping of `exported` for copies into `destination`, opened on first
  // use; held (not evicted) until release(). An error is a decline.
  Status acquire(int sender, int sender_pid, const IpcExport& exported, const memory::PointerInfo& destination,
                 IpcMapping** mapping);
  void release(IpcMapping* mapping);
  // Closes every mapping (at MPI_Finalize).
  void clear();
  IpcCacheCounters counters() const;

 private:
  void evict_beyond_limits();
  // Closes the sender's mappings no copy reads; returns how many.
  std::size_t close_idle_of(int sender);

  IpcDriver& driver_;
  std::size_t max_entries_;
  std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::list<IpcMapping> mappings_;  // most recently used first; nodes never move in memory
  IpcCacheCounters counters_;
};

// The process's cache, over this library variant's IPC driver.
IpcCache& ipc_cache();

}  // namespace cumpi::transport
