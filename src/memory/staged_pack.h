// MPI_Pack, MPI_Unpack and their _external forms on device buffers, staged:
// the device side of the call is mirrored in host memory, MPI packs or
// unpacks there, and what it wrote goes back to the device.
#pragma once

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::memory {

Status staged_pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
                   MPI_Comm comm);
Status staged_unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
                     MPI_Comm comm);
Status staged_pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype type, void* outbuf,
                            MPI_Aint outsize, MPI_Aint* position);
Status staged_unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                              int outcount, MPI_Datatype type);

}  // namespace cumpi::memory
