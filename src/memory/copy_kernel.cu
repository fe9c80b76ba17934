// The batched copy kernel: blockIdx.y picks the copy, the x blocks share it.
// Compiled to PTX at build time and loaded by the CUDA backend into the
// contexts it copies in (cuModuleLoadData), so libcumpi links no CUDA
// runtime. A window of IPC pulls then costs one launch instead of one
// driver copy each.
#include "memory/copy_kernel_params.h"

extern "C" __global__ void cumpi_copy_batch(cumpi_copy_batch_params params) {
  const cumpi_copy_descriptor copy = params.copies[blockIdx.y];
  const uint4* from = reinterpret_cast<const uint4*>(copy.from);
  uint4* to = reinterpret_cast<uint4*>(copy.to);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < copy.vectors; i += stride) {
    to[i] = from[i];
  }
}
