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

// Fills `driver` from the already loaded libcuda.so.1. False when the driver
// is not loaded in this process, or lacks a function (the log says which).
bool load_cuda_driver_if_present(CudaDriver* driver);

// Ok for CUDA_SUCCESS; otherwise a cuda_error naming the call and the
// driver's error name and string.
Status cuda_status(const CudaDriver& driver, CUresult result, const char* call);

}  // namespace cumpi::memory

// Calls a driver function and yields its Status; the text of the call goes
// into the error message.
#define CUMPI_CUDA_CALL(driver, name, ...) \
  ::cumpi::memory::cuda_status((driver), (driver).CUMPI_CUDA_FIELD(name)(__VA_ARGS__), #name)
