// MPI_Init, MPI_Init_thread, MPI_Finalize, and what applications ask cumpi.
#include "cumpi/cumpi.h"
#include "transport/ipc/ipc_cache.h"
#include "mpi_wrappers/intercept.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"

namespace cumpi::wrappers {

// The real init first, then cumpi's.
int intercept_Init(int* argc, char*** argv) {
  const int rc = real_mpi().Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    runtime::start();
  }
  return rc;
}

// cumpi's engine is not yet safe under concurrent calls from several threads
// (its matched queue, progress and receive table assume one caller at a
// time), so it offers at most MPI_THREAD_SERIALIZED, and asks the real MPI
// for no more: an application that asked for MPI_THREAD_MULTIPLE learns
// from `provided` that it must serialise its calls, as MPI lets it.
constexpr int kHighestThreadLevel = MPI_THREAD_SERIALIZED;

int intercept_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int asked = required > kHighestThreadLevel ? kHighestThreadLevel : required;
  const int rc = real_mpi().Init_thread(argc, argv, asked, provided);
  if (rc == MPI_SUCCESS) {
    runtime::start();
    if (required > kHighestThreadLevel) {
      runtime::warn_once_per_job(
          "MPI_THREAD_MULTIPLE was asked for; cumpi provides MPI_THREAD_SERIALIZED (calls from several threads "
          "must not overlap)");
    }
  }
  return rc;
}

// cumpi's teardown first (drain, statistics, pools), then the real finalize.
int intercept_Finalize() {
  runtime::stop();
  return real_mpi().Finalize();
}

}  // namespace cumpi::wrappers

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

}  // extern "C"
