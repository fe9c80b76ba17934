// libcumpi.so: device memory and copies through the CUDA driver.
#include "memory/copy_engine.h"
#include "memory/device_memory.h"

namespace cumpi::memory {

DeviceMemory& device_memory() {
  static DeviceMemory* instance = make_cuda_device_memory().release();  // lives until process exit
  return *instance;
}

CopyEngine& copy_engine() {
  static CopyEngine* instance = make_cuda_copy_engine(device_memory()).release();  // lives until process exit
  return *instance;
}

}  // namespace cumpi::memory
