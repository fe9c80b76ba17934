// The production backend: device memory through the CUDA driver API.
#include <link.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memory/backend.h"
#include "memory/cuda_driver.h"
#include "runtime/log.h"

namespace cumpi::memory {

namespace {

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

// Makes `context` current for the lifetime of the object.
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

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }

  bool device_memory_possible() override {
    if (driver_ready_.load(std::memory_order_acquire)) {
      return true;
    }
    const unsigned long long loads = library_load_count();
    if (loads == checked_load_count_.load(std::memory_order_relaxed)) {
      return false;
    }
    std::lock_guard<std::mutex> lock(load_mutex_);
    if (!driver_ready_.load(std::memory_order_relaxed) && load_cuda_driver_if_present(&driver_)) {
      CUMPI_LOG(debug, "CUDA driver found in the process");
      driver_ready_.store(true, std::memory_order_release);
    }
    checked_load_count_.store(loads, std::memory_order_relaxed);
    return driver_ready_.load(std::memory_order_relaxed);
  }

  PointerInfo query(const void* pointer) override {
    if (!driver_ready_.load(std::memory_order_acquire)) {
      return PointerInfo{};
    }
    CUpointer_attribute attributes[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_CONTEXT,
        CU_POINTER_ATTRIBUTE_IS_MANAGED,       CU_POINTER_ATTRIBUTE_BUFFER_ID,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    };
    unsigned int memory_type = 0;
    CUcontext context = nullptr;
    unsigned int is_managed = 0;
    unsigned long long buffer_id = 0;
    CUdeviceptr range_start = 0;
    size_t range_size = 0;
    int ordinal = -1;
    void* values[] = {&memory_type, &context, &is_managed, &buffer_id, &range_start, &range_size, &ordinal};
    const CUresult result = driver_.CUMPI_CUDA_FIELD(cuPointerGetAttributes)(
        sizeof(attributes) / sizeof(attributes[0]), attributes, values, reinterpret_cast<CUdeviceptr>(pointer));
    // Not initialised, invalid value and the like: memory the driver does not
    // know, i.e. host memory (as Open MPI's accelerator component reads it).
    PointerInfo info;
    if (result != CUDA_SUCCESS || memory_type != CU_MEMORYTYPE_DEVICE) {
      return info;
    }
    info.kind = is_managed != 0 ? MemoryKind::managed : MemoryKind::device;
    info.context = context;
    info.buffer_id = buffer_id;
    info.base = static_cast<std::uintptr_t>(range_start);
    info.size = range_size;
    info.device = ordinal;
    if (info.kind == MemoryKind::device) {
      set_sync_memops_once(info, pointer);
    }
    return info;
  }

  Status copy_to_host(void* host, const void* device, std::size_t bytes, const PointerInfo& owner) override {
    return copy(owner, [&](CUstream stream) {
      return CUMPI_CUDA_CALL(driver_, cuMemcpyDtoHAsync, host, reinterpret_cast<CUdeviceptr>(device), bytes,
                             stream);
    }, bytes);
  }

  Status copy_to_device(void* device, const void* host, std::size_t bytes, const PointerInfo& owner) override {
    return copy(owner, [&](CUstream stream) {
      return CUMPI_CUDA_CALL(driver_, cuMemcpyHtoDAsync, reinterpret_cast<CUdeviceptr>(device), host, bytes,
                             stream);
    }, bytes);
  }

  Status pin(void* host, std::size_t bytes, const PointerInfo& owner) override {
    ScopedContext scope(driver_, owner.context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    return CUMPI_CUDA_CALL(driver_, cuMemHostRegister, host, bytes, CU_MEMHOSTREGISTER_PORTABLE);
  }

  void unpin(void* host) override {
    // Fails harmlessly when the application reset the device meanwhile: the
    // registration went with the context, the memory itself is ours.
    if (driver_ready_.load(std::memory_order_acquire)) {
      driver_.CUMPI_CUDA_FIELD(cuMemHostUnregister)(host);
    }
  }

  void shutdown() override {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    for (auto& [context, stream] : streams_) {
      ScopedContext scope(driver_, context);
      if (scope.status().is_ok()) {
        driver_.CUMPI_CUDA_FIELD(cuStreamDestroy)(stream);
      }
    }
    streams_.clear();
  }

 private:
  template <typename Enqueue>
  Status copy(const PointerInfo& owner, Enqueue enqueue, std::size_t bytes) {
    if (bytes == 0) {
      return Status::ok();
    }
    ScopedContext scope(driver_, owner.context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    CUstream stream = nullptr;
    Status status = stream_for(owner.context, &stream);
    if (!status.is_ok()) {
      return status;
    }
    status = enqueue(stream);
    if (!status.is_ok()) {
      return status;
    }
    return CUMPI_CUDA_CALL(driver_, cuStreamSynchronize, stream);
  }

  // cumpi's own stream in `context`, created blocking so that copies order
  // after work the application queued on the legacy default stream.
  Status stream_for(void* context, CUstream* stream) {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    for (auto& [known, existing] : streams_) {
      if (known == context) {
        *stream = existing;
        return Status::ok();
      }
    }
    Status status = CUMPI_CUDA_CALL(driver_, cuStreamCreate, stream, CU_STREAM_DEFAULT);
    if (status.is_ok()) {
      streams_.emplace_back(context, *stream);
    }
    return status;
  }

  // As Open MPI does for buffers it copies: synchronous memory operations on
  // the allocation then complete before they return (DESIGN §2.7).
  void set_sync_memops_once(const PointerInfo& info, const void* pointer) {
    std::lock_guard<std::mutex> lock(sync_mutex_);
    if (sync_memops_set_.size() > 65536) {
      sync_memops_set_.clear();
    }
    if (sync_memops_set_.insert(info.buffer_id).second) {
      const unsigned int one = 1;
      Status status = CUMPI_CUDA_CALL(driver_, cuPointerSetAttribute, &one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                      reinterpret_cast<CUdeviceptr>(pointer));
      if (!status.is_ok()) {
        CUMPI_LOG(debug, "%s", status.message().c_str());
      }
    }
  }

  CudaDriver driver_;
  std::atomic<bool> driver_ready_{false};
  std::atomic<unsigned long long> checked_load_count_{~0ULL};
  std::mutex load_mutex_;
  std::mutex streams_mutex_;
  std::vector<std::pair<void*, CUstream>> streams_;
  std::mutex sync_mutex_;
  std::unordered_set<unsigned long long> sync_memops_set_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace cumpi::memory
