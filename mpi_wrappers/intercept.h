// The intercept_* functions, one per intercepted MPI function, declared from
// the one list. Each is called by the generated entry point once cumpi is
// active and the call is not nested; each sends host buffers to the real
// function and device buffers to one engine function.
#pragma once

#include "runtime/mpi_api.h"

namespace cumpi::wrappers {

#define CUMPI_LIFECYCLE(name, params, args) int intercept_##name params;
#define CUMPI_INTERCEPT(name, params, args) int intercept_##name params;
#include "runtime/mpi_functions.def"

}  // namespace cumpi::wrappers
