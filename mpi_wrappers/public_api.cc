// What applications may ask cumpi (include/cumpi/cumpi.h).
#include "cumpi/cumpi.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "coll/agreement_board.h"
#include "coll/hierarchy.h"
#include "coll/nccl_algorithm.h"
#include "coll/nccl_library.h"
#include "coll/selection.h"
#include "memory/copy_kernel_ptx.h"
#include "protocol/channel.h"
#include "protocol/comm_context.h"
#include "runtime/config.h"
#include "runtime/engine_lock.h"
#include "transport/cuda_ipc/ipc_cache.h"
#include "transport/registry.h"

namespace {

// The MPI of the mpi.h cumpi was compiled with.
std::string mpi_header_name() {
  std::string name;
#if defined(OPEN_MPI)
  name = "Open MPI " + std::to_string(OMPI_MAJOR_VERSION) + "." + std::to_string(OMPI_MINOR_VERSION) + "." +
         std::to_string(OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
  name = std::string("MPICH ") + MPICH_VERSION;
#else
  name = "an MPI";
#endif
  return name + " (MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) + ")";
}

}  // namespace

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
  info->hierarchical = cumpi::coll::hierarchical_calls();
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

int cumpi_set_coll_hierarchy(int on) {
  const cumpi::runtime::EngineEntry entry;
  if (!cumpi::protocol::channel_open()) {
    return -1;
  }
  cumpi::coll::set_hierarchy_on(on != 0);
  return 0;
}

int cumpi_get_settings(struct cumpi_setting* settings, int capacity) {
  static std::vector<cumpi::SettingLine> lines;
  lines = cumpi::setting_lines(cumpi::parse_config([](const char* name) { return std::getenv(name); }));
  for (int i = 0; i < capacity && i < static_cast<int>(lines.size()); ++i) {
    const cumpi::SettingLine& line = lines[static_cast<std::size_t>(i)];
    settings[i] = cumpi_setting{line.variable.c_str(), line.value.c_str(), line.origin.c_str(), line.meaning.c_str()};
  }
  return static_cast<int>(lines.size());
}

int cumpi_get_build_info(struct cumpi_build_info* info) {
  static std::string nccl;
  static std::string mpi_header;
  std::string why_not;
  const bool loadable = cumpi::coll::nccl::available(&why_not);
  nccl = loadable ? cumpi::coll::nccl::version() : why_not;
  mpi_header = mpi_header_name();
  info->ucx = cumpi::transport::transport_named("ucx") != nullptr ? 1 : 0;
  info->kernels = cumpi::memory::copy_kernel_ptx() != nullptr ? 1 : 0;
  info->nccl_loadable = loadable ? 1 : 0;
  info->nccl = nccl.c_str();
  info->mpi_header = mpi_header.c_str();
  return 0;
}

}  // extern "C"
