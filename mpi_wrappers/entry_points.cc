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
#include "runtime/errors.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
#include "runtime/stats.h"

#define CUMPI_ENTRY __attribute__((visibility("default")))

namespace cumpi::wrappers {

thread_local int t_wrapper_depth __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// Counts and times intercepted calls when CUMPI_STATS=1.
class CallRecord {
 public:
  CallRecord() : start_(stats::enabled() ? stats::now_seconds() : -1.0) {}
  ~CallRecord() {
    if (start_ >= 0) {
      stats::record(stats::Route::intercepted, 0, stats::now_seconds() - start_);
    }
  }
  CallRecord(const CallRecord&) = delete;
  CallRecord& operator=(const CallRecord&) = delete;

 private:
  double start_;
};

}  // namespace
}  // namespace cumpi::wrappers

#define CUMPI_ALIAS(name, params) \
  extern "C" CUMPI_ENTRY int PMPI_##name params __attribute__((alias("MPI_" #name)));

#define CUMPI_LIFECYCLE(name, params, args)           \
  extern "C" CUMPI_ENTRY int MPI_##name params {      \
    cumpi::wrappers::ReentryGuard guard;              \
    if (guard.nested()) {                             \
      return cumpi::real_mpi().name args;             \
    }                                                 \
    return cumpi::wrappers::intercept_##name args;    \
  }                                                   \
  CUMPI_ALIAS(name, params)

#define CUMPI_INTERCEPT(name, params, args)                         \
  extern "C" CUMPI_ENTRY int MPI_##name params {                    \
    cumpi::wrappers::ReentryGuard guard;                            \
    if (guard.nested() || !cumpi::runtime::interposing()) {         \
      return cumpi::real_mpi().name args;                           \
    }                                                               \
    cumpi::wrappers::CallRecord record;                             \
    cumpi::t_current_mpi_call = "MPI_" #name;                       \
    cumpi::protocol::progress_if_pending();                         \
    return cumpi::wrappers::intercept_##name args;                  \
  }                                                                 \
  CUMPI_ALIAS(name, params)

#include "runtime/mpi_functions.def"
