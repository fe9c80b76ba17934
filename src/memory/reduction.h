// Element-wise reductions of device buffers (the collectives' arithmetic):
// what one reduction computes, described without MPI so that the memory
// layer runs it, on the GPU with the reduction kernels (reduction_kernel.cu)
// or on the host in the emulation. coll/reduction_type.h maps MPI's types
// and ops onto these.
#pragma once

#include <cstddef>

#include "memory/reduction_kernel_params.h"

namespace cumpi::memory {

// The element types the kernels reduce (MPI's predefined C types, the
// Fortran ones of the same layout, and the pair types of MAXLOC/MINLOC).
enum class ReductionType : unsigned {
  int8 = CUMPI_REDUCE_INT8,
  uint8 = CUMPI_REDUCE_UINT8,
  int16 = CUMPI_REDUCE_INT16,
  uint16 = CUMPI_REDUCE_UINT16,
  int32 = CUMPI_REDUCE_INT32,
  uint32 = CUMPI_REDUCE_UINT32,
  int64 = CUMPI_REDUCE_INT64,
  uint64 = CUMPI_REDUCE_UINT64,
  float32 = CUMPI_REDUCE_FLOAT32,
  float64 = CUMPI_REDUCE_FLOAT64,
  complex64 = CUMPI_REDUCE_COMPLEX64,
  complex128 = CUMPI_REDUCE_COMPLEX128,
  boolean = CUMPI_REDUCE_BOOL,
  float_int = CUMPI_REDUCE_FLOAT_INT,
  double_int = CUMPI_REDUCE_DOUBLE_INT,
  long_int = CUMPI_REDUCE_LONG_INT,
  int_int = CUMPI_REDUCE_INT_INT,
  short_int = CUMPI_REDUCE_SHORT_INT,
  count = CUMPI_REDUCE_TYPE_COUNT,
};

enum class ReductionOp : unsigned {
  sum = CUMPI_REDUCE_SUM,
  prod = CUMPI_REDUCE_PROD,
  min = CUMPI_REDUCE_MIN,
  max = CUMPI_REDUCE_MAX,
  land = CUMPI_REDUCE_LAND,
  lor = CUMPI_REDUCE_LOR,
  lxor = CUMPI_REDUCE_LXOR,
  band = CUMPI_REDUCE_BAND,
  bor = CUMPI_REDUCE_BOR,
  bxor = CUMPI_REDUCE_BXOR,
  maxloc = CUMPI_REDUCE_MAXLOC,
  minloc = CUMPI_REDUCE_MINLOC,
};

// Bytes of one element.
std::size_t element_bytes(ReductionType type);
// Whether MPI defines `op` on `type` (and so the kernels compute it).
bool reduction_defined(ReductionType type, ReductionOp op);
const char* reduction_type_name(ReductionType type);

// output[i] = inputs[0][i] op inputs[1][i] op ... in that order, for every
// i < count: the same order on every rank, so results agree bit for bit.
// The output may be one of the inputs (each element is read before it is
// written, by the same thread); no other overlap is allowed.
struct ReductionJob {
  const void* inputs[CUMPI_REDUCE_MOST_INPUTS] = {};
  int input_count = 0;
  void* output = nullptr;
  std::size_t count = 0;  // elements
  ReductionType type = ReductionType::int32;
  ReductionOp op = ReductionOp::sum;
};

// The job on host memory (the emulation's "kernel", and the unit tests'
// reference); inputs and output must be host-accessible.
void reduce_on_host(const ReductionJob& job);
// The job as the kernel takes it.
cumpi_reduce_params reduction_params(const ReductionJob& job);

}  // namespace cumpi::memory
