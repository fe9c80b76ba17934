// The reduction kernel: one launch reduces up to CUMPI_REDUCE_MOST_INPUTS
// buffers element by element (reduction_ops.h), in a grid-stride loop.
// Compiled to PTX at build time and loaded by the kernel registry like the
// batched copy kernel.
#include "memory/reduction_ops.h"

extern "C" __global__ void cumpi_reduce(cumpi_reduce_params params) {
  const unsigned long long first = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  cumpi::reduce_ops::reduce_by_type(params, first, step);
}
