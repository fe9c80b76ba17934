// What applications may ask cumpi (include/cumpi/cumpi.h).
#include "cumpi/cumpi.h"

#include <optional>

#include "coll/agreement_board.h"
#include "coll/nccl_algorithm.h"
#include "coll/selection.h"
#include "protocol/comm_context.h"
#include "runtime/config.h"
#include "runtime/engine_lock.h"
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

int cumpi_get_coll_info(struct cumpi_coll_info* info) {
  const cumpi::coll::CollectiveCounts calls = cumpi::coll::collective_counts();
  const cumpi::coll::BoardCounts boards = cumpi::coll::board_counts();
  info->on_gpu = calls.on_gpu;
  info->staged = calls.staged;
  info->boards_made = boards.made;
  info->boards_released = boards.released;
  const cumpi::coll::NcclCounts nccl = cumpi::coll::nccl_counts();
  info->nccl_made = nccl.made;
  info->nccl_destroyed = nccl.destroyed;
  return 0;
}

int cumpi_set_coll(const char* algorithms) {
  const std::optional<cumpi::CollAlgorithms> parsed =
      cumpi::parse_coll_algorithms(algorithms != nullptr ? algorithms : "");
  if (!parsed) {
    return -1;
  }
  const cumpi::runtime::EngineEntry entry;
  cumpi::coll::selection().configure(parsed->names);
  return 0;
}

}  // extern "C"
