#include "transport/cuda_ipc/ipc_cache.h"

#include "runtime/config.h"
#include "runtime/log.h"

namespace cumpi::transport {

Status IpcCache::acquire(int sender, int sender_pid, const IpcExport& exported, const memory::PointerInfo& destination,
                         IpcMapping** mapping) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = mappings_.begin(); it != mappings_.end(); ++it) {
    if (it->sender == sender && it->buffer_id == exported.buffer_id && it->context == destination.context) {
      mappings_.splice(mappings_.begin(), mappings_, it);
      ++counters_.hits;
      ++mappings_.front().in_flight;
      *mapping = &mappings_.front();
      return Status::ok();
    }
  }
  IpcMapping opened;
  Status status = driver_.open_ipc(exported, sender_pid, destination, &opened.base);
  if (!status.is_ok() && status.code() != StatusCode::unreachable && close_idle_of(sender) != 0) {
    // A mapping of a buffer the sender freed keeps its memory mapped here, and
    // the driver refuses to map a new buffer on that memory again
    // (CUDA_ERROR_ALREADY_MAPPED): closing the sender's idle mappings frees it.
    status = driver_.open_ipc(exported, sender_pid, destination, &opened.base);
  }
  if (!status.is_ok()) {
    return status;
  }
  opened.sender = sender;
  opened.buffer_id = exported.buffer_id;
  opened.context = destination.context;
  opened.bytes = exported.allocation_bytes;
  opened.in_flight = 1;
  mappings_.push_front(opened);
  ++counters_.opens;
  counters_.mapped_bytes += opened.bytes;
  evict_beyond_limits();
  *mapping = &mappings_.front();
  return Status::ok();
}

std::size_t IpcCache::close_idle_of(int sender) {
  std::size_t closed = 0;
  for (auto it = mappings_.begin(); it != mappings_.end();) {
    if (it->sender != sender || it->in_flight != 0) {
      ++it;
      continue;
    }
    driver_.close_ipc(it->base, it->context);
    counters_.mapped_bytes -= it->bytes;
    ++counters_.evictions;
    ++closed;
    it = mappings_.erase(it);
  }
  return closed;
}

void IpcCache::release(IpcMapping* mapping) {
  std::lock_guard<std::mutex> lock(mutex_);
  --mapping->in_flight;
  evict_beyond_limits();
}

void IpcCache::evict_beyond_limits() {
  auto it = mappings_.end();
  while (it != mappings_.begin() && (mappings_.size() > max_entries_ || counters_.mapped_bytes > max_bytes_)) {
    --it;
    if (it->in_flight != 0) {
      continue;
    }
    driver_.close_ipc(it->base, it->context);
    counters_.mapped_bytes -= it->bytes;
    ++counters_.evictions;
    it = mappings_.erase(it);
  }
}

void IpcCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (IpcMapping& mapping : mappings_) {
    if (mapping.in_flight != 0) {
      CUMPI_LOG(warn, "closing an IPC mapping of rank %d with %d copies in flight", mapping.sender, mapping.in_flight);
    }
    driver_.close_ipc(mapping.base, mapping.context);
  }
  mappings_.clear();
  counters_.mapped_bytes = 0;
}

IpcCacheCounters IpcCache::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  IpcCacheCounters now = counters_;
  now.open_mappings = mappings_.size();
  return now;
}

IpcCache& ipc_cache() {
  static IpcCache* cache =
      new IpcCache(ipc_driver(), config().ipc_cache_max, config().ipc_cache_max_bytes);  // lives to exit
  return *cache;
}

}  // namespace cumpi::transport
