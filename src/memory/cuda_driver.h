// The CUDA driver API, reached through dlopen("libcuda.so.1") with
// RTLD_NOLOAD: cumpi uses the driver only in processes that loaded it
// themselves, and never creates a context (DESIGN §2.4).
#pragma once

#include <cuda.h>

#include "runtime/status.h"

namespace cumpi::memory {

// Two levels, so that the field is named after cuda.h's expansion of `name`
// wherever it is used.
#define CUMPI_CUDA_FIELD(name) CUMPI_CUDA_FIELD_EXPANDED(name)
#define CUMPI_CUDA_FIELD_EXPANDED(name) name##_fn
struct CudaDriver {
#define CUMPI_CUDA_FUNCTION(name) decltype(&::name) CUMPI_CUDA_FIELD(name) = nullptr;
#include "memory/cuda_driver_functions.def"
#undef CUMPI_CUDA_FUNCTION
};

// The process's driver. find_cuda_driver() looks for an already loaded
// libcuda.so.1 (looking again only once the loader has loaded something
// since the last look: cheap while the answer is no); once it said yes,
// cuda_driver() holds the functions and cuda_driver_found() is true.
bool find_cuda_driver();
bool cuda_driver_found();
const CudaDriver& cuda_driver();

// Ok for CUDA_SUCCESS; otherwise a cuda_error naming the call and the
// driver's error name and string.
Status cuda_status(const CudaDriver& driver, CUresult result, const char* call);

}  // namespace cumpi::memory

// Calls a driver function and yields its Status; the text of the call goes
// into the error message.
#define CUMPI_CUDA_CALL(driver, name, ...) \
  ::cumpi::memory::cuda_status((driver), (driver).CUMPI_CUDA_FIELD(name)(__VA_ARGS__), #name)
