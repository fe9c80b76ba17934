// MPI_Init, MPI_Init_thread, MPI_Finalize, and what applications ask cumpi.
#include "cumpi/cumpi.h"
#include "mpi_wrappers/intercept.h"
#include "runtime/engine_lock.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
#include "transport/cuda_ipc/ipc_cache.h"

namespace cumpi::wrappers {

// The real init first, then cumpi's.
int intercept_Init(int* argc, char*** argv) {
  const int rc = real_mpi().Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    runtime::start();
  }
  return rc;
}

// Every thread level the real MPI grants: under MPI_THREAD_MULTIPLE the
// engine is entered by one thread at a time (runtime/engine_lock.h), before
// any other thread can call MPI.
int intercept_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = real_mpi().Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) {
    if (*provided == MPI_THREAD_MULTIPLE) {
      runtime::engine_serves_threads();
    }
    runtime::start();
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
