// The exported MPI_* and PMPI_* symbols, generated from the one list.
//
// Each MPI_X is also defined as PMPI_X (an alias of the same function): Open
// MPI's Fortran bindings and tools stacked above cumpi call PMPI_* directly,
// and must reach cumpi too. The real functions are reached only through
// real_mpi(), resolved with dlsym(RTLD_NEXT).
//
// These are definitions of the functions mpi.h declares, so a parameter list
// in the list that differs from the installed mpi.h fails to compile.
#include "mpi_wrappers/call_bytes.h"
#include "mpi_wrappers/intercept.h"
#include "mpi_wrappers/pass_through.h"
#include "mpi_wrappers/reentry_guard.h"
#include "protocol/progress.h"
#include "runtime/engine_lock.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
#include "runtime/stats.h"

#define CUMPI_ENTRY __attribute__((visibility("default")))
// (a, b, c) without its parentheses.
#define CUMPI_UNPARENTHESISED(...) __VA_ARGS__

namespace cumpi::wrappers {

thread_local int t_wrapper_depth __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// The entry's extra work, out of line so that the common case costs one load
// and a branch: progress of outstanding device operations (not from within
// the engine itself, whose calls into MPI never re-enter it) and the
// statistics of CUMPI_STATS=1.
template <typename Call, typename Bytes>
__attribute__((noinline)) int with_entry_work(unsigned state, const Call& call, const Bytes& host_bytes) {
  if ((state & runtime::kProgressWork) != 0 && !ReentryGuard::inside()) {
    ReentryGuard guard;
    const runtime::EngineEntryIfFree entry;
    if (entry.entered()) protocol::progress_on_entry();
  }
  if ((state & runtime::kStatisticsWork) == 0) {
    return call();
  }
  const std::size_t bytes = host_bytes();
  const double start = stats::now_seconds();
  const int rc = call();
  stats::record(stats::Route::intercepted, bytes, stats::now_seconds() - start);
  return rc;
}

}  // namespace
}  // namespace cumpi::wrappers

#define CUMPI_ALIAS(name, params) extern "C" CUMPI_ENTRY int PMPI_##name params __attribute__((alias("MPI_" #name)));

#define CUMPI_LIFECYCLE(name, params, args)        \
  extern "C" CUMPI_ENTRY int MPI_##name params {   \
    if (cumpi::wrappers::ReentryGuard::inside()) { \
      return cumpi::real_mpi().name args;          \
    }                                              \
    cumpi::wrappers::ReentryGuard guard;           \
    return cumpi::wrappers::intercept_##name args; \
  }                                                \
  CUMPI_ALIAS(name, params)

// The passes_straight tests of the list are written against these names.
using namespace cumpi::pass_through;  // NOLINT(google-build-using-namespace): this file only

// Active, no extra work and passes_straight: a jump to the real function.
// Otherwise out of line: inactive (before MPI_Init, after MPI_Finalize,
// CUMPI_DISABLE=1) goes to the real function, active to intercept_<name>
// after the entry's extra work.
#define CUMPI_INTERCEPT(name, params, args, passes_straight)                                                  \
  namespace cumpi::wrappers {                                                                                 \
  __attribute__((noinline)) static int entry_slow_##name params {                                             \
    const unsigned state = runtime::entry_state();                                                            \
    if ((state & runtime::kActive) == 0) {                                                                    \
      return real_mpi().name args;                                                                            \
    }                                                                                                         \
    if (state == runtime::kActive) {                                                                          \
      return intercept_##name args;                                                                           \
    }                                                                                                         \
    return with_entry_work(                                                                                   \
        state, [=] { return intercept_##name args; },                                                         \
        [=] { return call_bytes::of(call_bytes::name{}, CUMPI_UNPARENTHESISED args); });                      \
  }                                                                                                           \
  }                                                                                                           \
  extern "C" CUMPI_ENTRY int MPI_##name params {                                                              \
    if (__builtin_expect(cumpi::runtime::entry_state() == cumpi::runtime::kActive, 1) && (passes_straight)) { \
      return cumpi::detail::g_real_mpi.name args;                                                             \
    }                                                                                                         \
    return cumpi::wrappers::entry_slow_##name args;                                                           \
  }                                                                                                           \
  CUMPI_ALIAS(name, params)

#include "mpi_wrappers/wrapped_functions.def"
