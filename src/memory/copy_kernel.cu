// The batched copy kernel: blockIdx.y picks the copy, the x blocks share it.
// Compiled to PTX at build time and loaded by the kernel registry into the
// contexts it copies in (cuModuleLoadData), so libcumpi links no CUDA
// runtime. A window of IPC pulls then costs one launch instead of one
// driver copy each.
#include "memory/copy_kernel_params.h"

// Each thread loads four vectors before it stores them, so that a block's
// loads are in flight together (a copy's sources and destination do not
// overlap).
extern "C" __global__ void cumpi_copy_batch(cumpi_copy_batch_params params) {
  constexpr unsigned kUnroll = 4;
  const cumpi_copy_descriptor copy = params.copies[blockIdx.y];
  const uint4* __restrict__ from = reinterpret_cast<const uint4*>(copy.from);
  uint4* __restrict__ to = reinterpret_cast<uint4*>(copy.to);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       base < copy.vectors; base += stride * kUnroll) {
    uint4 vectors[kUnroll];
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) {
      const unsigned long long index = base + k * stride;
      if (index < copy.vectors) vectors[k] = from[index];
    }
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) {
      const unsigned long long index = base + k * stride;
      if (index < copy.vectors) to[index] = vectors[k];
    }
  }
  // The bytes after the whole vectors (all of a small unaligned copy): block
  // 0's threads, a byte each.
  if (blockIdx.x == 0) {
    const unsigned char* __restrict__ from_bytes =
        reinterpret_cast<const unsigned char*>(copy.from) + copy.vectors * 16;
    unsigned char* __restrict__ to_bytes = reinterpret_cast<unsigned char*>(copy.to) + copy.vectors * 16;
    for (unsigned long long i = threadIdx.x; i < copy.tail; i += blockDim.x) to_bytes[i] = from_bytes[i];
  }
}
