// The exported MPI_* and PMPI_* symbols, generated from the one list.
//
// Each MPI_X is also defined as PMPI_X (an alias of the same function): Open
// MPI's Fortran bindings and tools stacked above cumpi call PMPI_* directly,
// and must reach cumpi too. The real functions are reached only through
// real_mpi(), resolved with dlsym(RTLD_NEXT).
//
// These are definitions of the functions mpi.h declares, so a parameter list
// in the list that differs from the installed mpi.h fails to compile.
#include "mpi_wrappers/intercept.h"
#include "mpi_wrappers/reentry_guard.h"
#include "protocol/progress.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
#include "runtime/stats.h"

#define CUMPI_ENTRY __attribute__((visibility("default")))

namespace cumpi::wrappers {

thread_local int t_wrapper_depth __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// The entry's extra work, kept out of line so that the common case (none)
// costs one load and a branch: progress of outstanding device operations,
// and the statistics of CUMPI_STATS=1.
template <typename Call>
__attribute__((noinline)) int with_entry_work(unsigned work, Call call) {
  if ((work & runtime::kProgressWork) != 0) {
    ReentryGuard guard;
    protocol::progress();
  }
  if ((work & runtime::kStatisticsWork) == 0) {
    return call();
  }
  const double start = stats::now_seconds();
  const int rc = call();
  stats::record(stats::Route::intercepted, 0, stats::now_seconds() - start);
  return rc;
}

}  // namespace
}  // namespace cumpi::wrappers

#define CUMPI_ALIAS(name, params) \
  extern "C" CUMPI_ENTRY int PMPI_##name params __attribute__((alias("MPI_" #name)));

#define CUMPI_LIFECYCLE(name, params, args)            \
  extern "C" CUMPI_ENTRY int MPI_##name params {       \
    if (cumpi::wrappers::ReentryGuard::inside()) {     \
      return cumpi::real_mpi().name args;              \
    }                                                  \
    cumpi::wrappers::ReentryGuard guard;               \
    return cumpi::wrappers::intercept_##name args;     \
  }                                                    \
  CUMPI_ALIAS(name, params)

#define CUMPI_INTERCEPT(name, params, args)                         \
  extern "C" CUMPI_ENTRY int MPI_##name params {                    \
    if (cumpi::wrappers::ReentryGuard::inside() || !cumpi::runtime::interposing()) { \
      return cumpi::real_mpi().name args;                           \
    }                                                               \
    if (const unsigned work = cumpi::runtime::entry_work()) {       \
      return cumpi::wrappers::with_entry_work(                      \
          work, [=] { return cumpi::wrappers::intercept_##name args; }); \
    }                                                               \
    return cumpi::wrappers::intercept_##name args;                  \
  }                                                                 \
  CUMPI_ALIAS(name, params)

#include "runtime/mpi_functions.def"
