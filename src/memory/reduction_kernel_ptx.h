// The reduction kernel's PTX (reduction_kernel.cu), generated at build time;
// null when the build had no nvcc.
#pragma once

namespace cumpi::memory {

const char* reduction_kernel_ptx();

}  // namespace cumpi::memory
