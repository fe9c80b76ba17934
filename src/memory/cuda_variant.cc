// libcumpi.so: the CUDA driver backend is the one backend.
#include "memory/backend.h"

namespace cumpi::memory {

Backend& backend() {
  static Backend* instance = make_cuda_backend().release();  // lives until process exit
  return *instance;
}

}  // namespace cumpi::memory
