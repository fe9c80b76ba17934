// What applications may ask cumpi (include/cumpi/cumpi.h).
#include "cumpi/cumpi.h"
#include "protocol/comm_context.h"
#include "transport/cuda_ipc/ipc_cache.h"

extern "C" {

int MPIX_Query_cuda_support(void) { return 1; }

const char* cumpi_version(void) { return CUMPI_VERSION_STRING; }

int cumpi_get_ipc_cache_info(struct cumpi_ipc_cache_info* info) {
  const cumpi::transport::IpcCacheCounters counters = cumpi::transport::ipc_cache().counters();
  info->open_mappings = counters.open_mappings;
  info->mapped_bytes = counters.mapped_bytes;
  info->opens = counters.opens;
  info->hits = counters.hits;
  info->evictions = counters.evictions;
  return 0;
}

int cumpi_get_comm_context_info(struct cumpi_comm_context_info* info) {
  const cumpi::protocol::CommContextCounts counts = cumpi::protocol::comm_context_counts();
  info->made = counts.made;
  info->released = counts.released;
  return 0;
}

}  // extern "C"
