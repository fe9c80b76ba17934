#include "memory/cuda_driver.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <mutex>
#include <string>

#include "runtime/log.h"

namespace cumpi::memory {

#define CUMPI_STRINGIFY_EXPANDED(name) CUMPI_STRINGIFY(name)
#define CUMPI_STRINGIFY(name) #name

namespace {

// Fills `driver` from the already loaded libcuda.so.1. False when the driver
// is not loaded in this process, or lacks a function (the log says which).
bool load_cuda_driver_if_present(CudaDriver* driver) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) {
    return false;
  }
  bool complete = true;
#define CUMPI_CUDA_FUNCTION(name)                                                                                   \
  driver->CUMPI_CUDA_FIELD(name) =                                                                                  \
      reinterpret_cast<decltype(&::name)>(dlsym(library, CUMPI_STRINGIFY_EXPANDED(name)));                          \
  if (driver->CUMPI_CUDA_FIELD(name) == nullptr) {                                                                  \
    CUMPI_LOG(error, "the CUDA driver lacks %s; device buffers are not supported", CUMPI_STRINGIFY_EXPANDED(name)); \
    complete = false;                                                                                               \
  }
#include "memory/cuda_driver_functions.def"
#undef CUMPI_CUDA_FUNCTION
  return complete;
}

int read_load_count(dl_phdr_info* info, size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;
}

// How many objects the dynamic loader has loaded so far: when it has not
// changed, libcuda cannot have appeared since the last look.
unsigned long long library_load_count() {
  unsigned long long count = 0;
  dl_iterate_phdr(read_load_count, &count);
  return count;
}

CudaDriver g_driver;
std::atomic<bool> g_driver_found{false};
std::atomic<unsigned long long> g_checked_load_count{~0ULL};
std::mutex g_load_mutex;

}  // namespace

bool find_cuda_driver() {
  if (g_driver_found.load(std::memory_order_acquire)) {
    return true;
  }
  const unsigned long long loads = library_load_count();
  if (loads == g_checked_load_count.load(std::memory_order_relaxed)) {
    return false;
  }
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (!g_driver_found.load(std::memory_order_relaxed) && load_cuda_driver_if_present(&g_driver)) {
    CUMPI_LOG(debug, "CUDA driver found in the process");
    g_driver_found.store(true, std::memory_order_release);
  }
  g_checked_load_count.store(loads, std::memory_order_relaxed);
  return g_driver_found.load(std::memory_order_relaxed);
}

bool cuda_driver_found() { return g_driver_found.load(std::memory_order_acquire); }

const CudaDriver& cuda_driver() { return g_driver; }

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
