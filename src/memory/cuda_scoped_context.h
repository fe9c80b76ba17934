// Makes a CUDA context current for the lifetime of an object.
#pragma once

#include "memory/cuda_driver.h"
#include "runtime/status.h"

namespace cumpi::memory {

class ScopedContext {
 public:
  ScopedContext(const CudaDriver& driver, void* context)
      : driver_(driver), status_(CUMPI_CUDA_CALL(driver, cuCtxPushCurrent, static_cast<CUcontext>(context))) {}
  ~ScopedContext() {
    if (status_.is_ok()) {
      CUcontext popped = nullptr;
      driver_.CUMPI_CUDA_FIELD(cuCtxPopCurrent)(&popped);
    }
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  const Status& status() const { return status_; }

 private:
  const CudaDriver& driver_;
  Status status_;
};

}  // namespace cumpi::memory
