// The batched copy kernel's PTX (copy_kernel.cu), generated at build time;
// null when the build had no nvcc.
#pragma once

namespace cumpi::memory {

const char* copy_kernel_ptx();

}  // namespace cumpi::memory
