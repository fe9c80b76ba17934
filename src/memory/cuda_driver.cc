#include "memory/cuda_driver.h"

#include <dlfcn.h>

#include <string>

#include "runtime/log.h"

namespace cumpi::memory {

#define CUMPI_STRINGIFY_EXPANDED(name) CUMPI_STRINGIFY(name)
#define CUMPI_STRINGIFY(name) #name

bool load_cuda_driver_if_present(CudaDriver* driver) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) {
    return false;
  }
  bool complete = true;
#define CUMPI_CUDA_FUNCTION(name)                                                          \
  driver->CUMPI_CUDA_FIELD(name) =                                                         \
      reinterpret_cast<decltype(&::name)>(dlsym(library, CUMPI_STRINGIFY_EXPANDED(name))); \
  if (driver->CUMPI_CUDA_FIELD(name) == nullptr) {                                         \
    CUMPI_LOG(error, "the CUDA driver lacks %s; device buffers are not supported",         \
              CUMPI_STRINGIFY_EXPANDED(name));                                             \
    complete = false;                                                                      \
  }
#include "memory/cuda_driver_functions.def"
#undef CUMPI_CUDA_FUNCTION
  return complete;
}

Status cuda_status(const CudaDriver& driver, CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) {
    return Status::ok();
  }
  const char* name = "unknown";
  const char* text = "unknown error";
  driver.CUMPI_CUDA_FIELD(cuGetErrorName)(result, &name);
  driver.CUMPI_CUDA_FIELD(cuGetErrorString)(result, &text);
  return Status::error(StatusCode::cuda_error, std::string(call) + " failed: " + text + " (" + name + ")");
}

}  // namespace cumpi::memory
