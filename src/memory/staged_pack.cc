#include "memory/staged_pack.h"

#include <algorithm>
#include <cstdint>

#include "memory/classifier.h"
#include "memory/staged_buffer.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::memory {

namespace {

// The packed side: `limit` bytes of buffer from `position` on. Bytes MPI
// does not write keep their values (preserve), since the call writes only
// the packed data from `position`.
ByteSpan packed_span(std::int64_t position, std::int64_t limit) {
  ByteSpan span;
  span.offset = position;
  span.bytes = static_cast<std::size_t>(std::max<std::int64_t>(0, limit - position));
  return span;
}

// The typed side: the bytes `count` elements of `type` touch.
Status typed_span(MPI_Datatype type, int count, ByteSpan* span, bool* holes) {
  TypeLayout layout;
  Status status = span_of_call(type, count, &layout, span);
  *holes = status.is_ok() && !fills_span(layout, count, *span);
  return status;
}

// The packed bytes a call may write: no more than the buffer holds after
// `position`, nor than MPI's upper bound for the data.
std::int64_t packed_limit(std::int64_t position, std::int64_t size, std::int64_t upper_bound) {
  return std::min(size, position + upper_bound);
}

}  // namespace

Status staged_pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
                   MPI_Comm comm) {
  const RealMpi& mpi = real_mpi();
  ByteSpan in_span;
  bool holes = false;
  int upper_bound = 0;
  Status status = typed_span(type, incount, &in_span, &holes);
  if (status.is_ok()) status = from_mpi(mpi.Pack_size(incount, type, comm, &upper_bound));
  if (!status.is_ok()) {
    return status;
  }
  StagedBuffer in;
  StagedBuffer out;
  status = StagedBuffer::for_reading(inbuf, in_span, locate_span(inbuf, in_span), &in);
  if (status.is_ok()) {
    const ByteSpan out_span = packed_span(*position, packed_limit(*position, outsize, upper_bound));
    status = StagedBuffer::for_writing(outbuf, out_span, locate_span(outbuf, out_span), true, &out);
  }
  if (!status.is_ok()) {
    return status;
  }
  const int rc = mpi.Pack(in.mpi_pointer(), incount, type, out.mpi_pointer(), outsize, position, comm);
  return rc == MPI_SUCCESS ? out.copy_back_all() : Status::mpi(rc);
}

Status staged_unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
                     MPI_Comm comm) {
  ByteSpan out_span;
  bool holes = false;
  Status status = typed_span(type, outcount, &out_span, &holes);
  if (!status.is_ok()) {
    return status;
  }
  StagedBuffer in;
  StagedBuffer out;
  const ByteSpan in_span = packed_span(*position, insize);
  status = StagedBuffer::for_reading(inbuf, in_span, locate_span(inbuf, in_span), &in);
  if (status.is_ok()) status = StagedBuffer::for_writing(outbuf, out_span, locate_span(outbuf, out_span), holes, &out);
  if (!status.is_ok()) {
    return status;
  }
  const int rc = real_mpi().Unpack(in.mpi_pointer(), insize, position, out.mpi_pointer(), outcount, type, comm);
  return rc == MPI_SUCCESS ? out.copy_back_all() : Status::mpi(rc);
}

Status staged_pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype type, void* outbuf,
                            MPI_Aint outsize, MPI_Aint* position) {
  const RealMpi& mpi = real_mpi();
  ByteSpan in_span;
  bool holes = false;
  MPI_Aint upper_bound = 0;
  Status status = typed_span(type, incount, &in_span, &holes);
  if (status.is_ok()) status = from_mpi(mpi.Pack_external_size(datarep, incount, type, &upper_bound));
  if (!status.is_ok()) {
    return status;
  }
  StagedBuffer in;
  StagedBuffer out;
  status = StagedBuffer::for_reading(inbuf, in_span, locate_span(inbuf, in_span), &in);
  if (status.is_ok()) {
    const ByteSpan out_span = packed_span(*position, packed_limit(*position, outsize, upper_bound));
    status = StagedBuffer::for_writing(outbuf, out_span, locate_span(outbuf, out_span), true, &out);
  }
  if (!status.is_ok()) {
    return status;
  }
  const int rc = mpi.Pack_external(datarep, in.mpi_pointer(), incount, type, out.mpi_pointer(), outsize, position);
  return rc == MPI_SUCCESS ? out.copy_back_all() : Status::mpi(rc);
}

Status staged_unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                              int outcount, MPI_Datatype type) {
  ByteSpan out_span;
  bool holes = false;
  Status status = typed_span(type, outcount, &out_span, &holes);
  if (!status.is_ok()) {
    return status;
  }
  StagedBuffer in;
  StagedBuffer out;
  const ByteSpan in_span = packed_span(*position, insize);
  status = StagedBuffer::for_reading(inbuf, in_span, locate_span(inbuf, in_span), &in);
  if (status.is_ok()) status = StagedBuffer::for_writing(outbuf, out_span, locate_span(outbuf, out_span), holes, &out);
  if (!status.is_ok()) {
    return status;
  }
  const int rc =
      real_mpi().Unpack_external(datarep, in.mpi_pointer(), insize, position, out.mpi_pointer(), outcount, type);
  return rc == MPI_SUCCESS ? out.copy_back_all() : Status::mpi(rc);
}

}  // namespace cumpi::memory
