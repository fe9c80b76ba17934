#include "memory/kernel_registry.h"

#include <cstring>

#include "memory/cuda_scoped_context.h"
#include "runtime/log.h"

namespace cumpi::memory {

CUfunction KernelRegistry::function(void* context, const KernelSource& kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const LoadedFunction& known : functions_) {
    if (known.context == context && std::strcmp(known.entry, kernel.entry) == 0) {
      return known.function;
    }
  }
  LoadedFunction loaded{context, kernel.entry, nullptr};
  if (CUmodule module = module_of(context, kernel)) {
    Status status = CUMPI_CUDA_CALL(cuda_driver(), cuModuleGetFunction, &loaded.function, module, kernel.entry);
    if (!status.is_ok()) {
      CUMPI_LOG(info, "%s (kernel %s)", status.message().c_str(), kernel.entry);
      loaded.function = nullptr;
    }
  }
  functions_.push_back(loaded);
  return loaded.function;
}

CUmodule KernelRegistry::module_of(void* context, const KernelSource& kernel) {
  for (const LoadedModule& known : modules_) {
    if (known.context == context && known.ptx == kernel.ptx) {
      return known.module;
    }
  }
  LoadedModule loaded{context, kernel.ptx, nullptr};
  if (const char* ptx = kernel.ptx()) {
    Status status = CUMPI_CUDA_CALL(cuda_driver(), cuModuleLoadData, &loaded.module, ptx);
    if (!status.is_ok()) {
      CUMPI_LOG(info, "%s; kernel %s is not used in this context", status.message().c_str(), kernel.entry);
      loaded.module = nullptr;
    }
  }
  modules_.push_back(loaded);
  return loaded.module;
}

void KernelRegistry::unload_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const LoadedModule& loaded : modules_) {
    ScopedContext scope(cuda_driver(), loaded.context);
    if (scope.status().is_ok() && loaded.module != nullptr) {
      cuda_driver().CUMPI_CUDA_FIELD(cuModuleUnload)(loaded.module);
    }
  }
  modules_.clear();
  functions_.clear();
}

}  // namespace cumpi::memory
