// The kernels cumpi runs on the GPU, built into the library as PTX at
// compile time and loaded into each context on first use: the batched copy
// kernel today; reduction kernels are added by naming their source here.
#pragma once

#include <mutex>
#include <vector>

#include "memory/cuda_driver.h"

namespace cumpi::memory {

// A kernel: its entry function and the PTX module that holds it.
struct KernelSource {
  const char* entry;     // the __global__ function's (extern "C") name
  const char* (*ptx)();  // the module; returns null when the build had no nvcc
};

class KernelRegistry {
 public:
  // `kernel` in `context` (current), its module loaded on first use; null
  // where it cannot be had (no PTX built in, a driver too old for it: logged
  // once at info, and asked no more in that context).
  CUfunction function(void* context, const KernelSource& kernel);
  // Unloads every module (at MPI_Finalize).
  void unload_all();

 private:
  struct LoadedModule {
    void* context;
    const char* (*ptx)();
    CUmodule module;  // null: could not be loaded
  };
  struct LoadedFunction {
    void* context;
    const char* entry;
    CUfunction function;  // null: not there
  };
  CUmodule module_of(void* context, const KernelSource& kernel);

  std::mutex mutex_;
  std::vector<LoadedModule> modules_;
  std::vector<LoadedFunction> functions_;
};

}  // namespace cumpi::memory
