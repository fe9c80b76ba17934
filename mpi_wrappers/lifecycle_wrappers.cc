// MPI_Init, MPI_Init_thread and MPI_Finalize.
#include "mpi_wrappers/engine_lifecycle.h"
#include "mpi_wrappers/intercept.h"
#include "runtime/engine_lock.h"
#include "runtime/real_mpi.h"

namespace cumpi::wrappers {

// The real init first, then cumpi's.
int intercept_Init(int* argc, char*** argv) {
  const int rc = real_mpi().Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    start_engine();
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
    start_engine();
  }
  return rc;
}

// cumpi's teardown first (drain, statistics, pools), then the real finalize.
int intercept_Finalize() {
  stop_engine();
  return real_mpi().Finalize();
}

}  // namespace cumpi::wrappers
