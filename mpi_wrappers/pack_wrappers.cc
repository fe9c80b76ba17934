// MPI_Pack, MPI_Unpack and their _external forms: host buffers to the real
// function, a device buffer on either side to the staged engine.
#include "memory/classifier.h"
#include "memory/staged_pack.h"
#include "mpi_wrappers/intercept.h"

namespace cumpi::wrappers {

namespace {
bool either_on_device(const void* in, const void* out) { return memory::on_device(in) || memory::on_device(out); }
}  // namespace

int intercept_Pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
                   MPI_Comm comm) {
  if (!either_on_device(inbuf, outbuf)) {
    return real().Pack(inbuf, incount, type, outbuf, outsize, position, comm);
  }
  return in_engine(comm, [=] { return memory::staged_pack(inbuf, incount, type, outbuf, outsize, position, comm); });
}

int intercept_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
                     MPI_Comm comm) {
  if (!either_on_device(inbuf, outbuf)) {
    return real().Unpack(inbuf, insize, position, outbuf, outcount, type, comm);
  }
  return in_engine(comm, [=] { return memory::staged_unpack(inbuf, insize, position, outbuf, outcount, type, comm); });
}

// The _external forms have no communicator: errors go to MPI_COMM_WORLD's
// handler (MPI 3.1, as the MPIs below cumpi implement).
int intercept_Pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype type, void* outbuf,
                            MPI_Aint outsize, MPI_Aint* position) {
  if (!either_on_device(inbuf, outbuf)) {
    return real().Pack_external(datarep, inbuf, incount, type, outbuf, outsize, position);
  }
  return in_engine(MPI_COMM_WORLD, [=] {
    return memory::staged_pack_external(datarep, inbuf, incount, type, outbuf, outsize, position);
  });
}

int intercept_Unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                              int outcount, MPI_Datatype type) {
  if (!either_on_device(inbuf, outbuf)) {
    return real().Unpack_external(datarep, inbuf, insize, position, outbuf, outcount, type);
  }
  return in_engine(MPI_COMM_WORLD, [=] {
    return memory::staged_unpack_external(datarep, inbuf, insize, position, outbuf, outcount, type);
  });
}

}  // namespace cumpi::wrappers
