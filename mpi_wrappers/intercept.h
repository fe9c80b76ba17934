// The intercept_* functions, one per intercepted MPI function, declared from
// the one list. Each is called by the generated entry point once cumpi is
// active and the entry's own pass-through test did not settle the call; each
// sends host buffers to the real function and device buffers to one engine
// function.
#pragma once

#include "memory/classifier.h"
#include "mpi_wrappers/reentry_guard.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/mpi_api.h"
#include "runtime/real_mpi.h"

namespace cumpi::wrappers {

// The real MPI from inside an intercept_* function: cumpi is active, so the
// table was loaded at MPI_Init and needs no check.
inline const RealMpi& real() { return detail::g_real_mpi; }

// One engine function, under the engine's lock (taken only under
// MPI_THREAD_MULTIPLE).
template <typename EngineCall>
Status run_in_engine(const EngineCall& call) {
  const runtime::EngineEntry entry;
  return call();
}

// Runs one engine function under the reentrancy guard and turns its Status
// into an MPI error code through comm's error handler. Host-buffer calls never
// come here: they pass straight through, guard-free, so that the compiler can
// make them a jump to the real function (hence out of line, and the call
// captured by value). The call comes by reference: passed by value, its
// captures are stored one by one and reloaded as vectors for the copy, a
// store-forwarding stall that cost a host MPI_Irecv tens of nanoseconds.
// `caller` is the intercept_* function, whose name becomes the MPI call's
// in error messages.
template <typename EngineCall>
__attribute__((noinline)) int in_engine(MPI_Comm comm, const EngineCall& call,
                                        const char* caller = __builtin_FUNCTION()) {
  ReentryGuard guard;
  // The user's error handler runs outside the engine.
  const int rc = report(run_in_engine(call), comm, caller);
  return rc;
}

#define CUMPI_LIFECYCLE(name, params, args) int intercept_##name params;
#define CUMPI_INTERCEPT(name, params, args, passes_straight) int intercept_##name params;
#include "mpi_wrappers/wrapped_functions.def"

}  // namespace cumpi::wrappers
