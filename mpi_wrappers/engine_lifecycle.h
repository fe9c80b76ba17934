// The engine's start after the real MPI_Init and its stop before the real
// MPI_Finalize, floor by floor: the ground floor (runtime), memory,
// transports, then the protocol's channel and communicator contexts; the
// stop undoes them in the opposite order. Only the floor above every other
// may call them all.
#pragma once

namespace cumpi::wrappers {

void start_engine();
// Drains outstanding device operations, prints statistics, frees pools.
void stop_engine();

}  // namespace cumpi::wrappers
