// The tests named in mpi_functions.def's passes_straight column: true when a
// call certainly needs nothing from cumpi, decided in a few instructions with
// no call. A false answer only means "let intercept_* look closer".
#pragma once

#include "memory/classifier.h"
#include "protocol/operation_table.h"

namespace cumpi::pass_through {

// Host memory by construction (NULL, the first page, heap, stack, image).
using memory::known_host;

// No device request exists: wait, test, start and free need nothing of cumpi.
inline bool no_device_requests() { return !protocol::has_device_requests(); }

}  // namespace cumpi::pass_through
