// Device memory through the CUDA driver API: what a pointer is, which
// context owns it, pinning host memory.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "memory/cuda_driver.h"
#include "memory/cuda_scoped_context.h"
#include "memory/device_memory.h"
#include "memory/freed_device_ranges.h"
#include "runtime/log.h"

namespace cumpi::memory {

namespace {

class CudaDeviceMemory final : public DeviceMemory {
 public:
  const char* name() const override { return "cuda"; }

  bool device_memory_possible() override { return find_cuda_driver(); }

  PointerInfo query(const void* pointer) override {
    if (!cuda_driver_found()) {
      return PointerInfo{};
    }
    const CudaDriver& driver = cuda_driver();
    CUpointer_attribute attributes[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,    CU_POINTER_ATTRIBUTE_CONTEXT,          CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_BUFFER_ID,      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
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
    const CUresult result = driver.CUMPI_CUDA_FIELD(cuPointerGetAttributes)(
        sizeof(attributes) / sizeof(attributes[0]), attributes, values, reinterpret_cast<CUdeviceptr>(pointer));
    // Not initialised, invalid value and the like, or no memory type (the
    // call succeeds for pointers it does not know, with the attributes left
    // zero): memory the driver does not know, i.e. host memory (as Open
    // MPI's accelerator component reads it), unless it was device memory.
    PointerInfo info;
    if (result != CUDA_SUCCESS || memory_type == 0) {
      return freed_or_host(pointer);
    }
    if (memory_type != CU_MEMORYTYPE_DEVICE) {
      return info;
    }
    info.kind = is_managed != 0 ? MemoryKind::managed : MemoryKind::device;
    info.context = context != nullptr ? context : context_for_device(ordinal);
    info.buffer_id = buffer_id;
    info.base = static_cast<std::uintptr_t>(range_start);
    info.size = range_size;
    info.device = ordinal;
    if (info.kind == MemoryKind::device) {
      set_sync_memops_once(info, pointer);
      saw_device_allocation(info.base, info.size);
    }
    return info;
  }

  void* current_context() override {
    CUcontext context = nullptr;
    if (!cuda_driver_found() || cuda_driver().CUMPI_CUDA_FIELD(cuCtxGetCurrent)(&context) != CUDA_SUCCESS) {
      return nullptr;
    }
    return context;
  }

  void make_current(void* context) override {
    if (cuda_driver_found() && context != nullptr) {
      const Status status = CUMPI_CUDA_CALL(cuda_driver(), cuCtxSetCurrent, static_cast<CUcontext>(context));
      if (!status.is_ok()) {
        CUMPI_LOG(warn, "%s", status.message().c_str());
      }
    }
  }

  // Kept per ordinal: the collectives ask on every call that could take nccl.
  bool device_uuid(int ordinal, unsigned char uuid[16]) override {
    std::lock_guard<std::mutex> lock(uuids_mutex_);
    for (const KnownUuid& known : uuids_) {
      if (known.ordinal == ordinal) {
        std::memcpy(uuid, known.uuid, sizeof(known.uuid));
        return true;
      }
    }
    CUdevice device = 0;
    CUuuid found;
    if (!cuda_driver_found() || cuda_driver().CUMPI_CUDA_FIELD(cuDeviceGet)(&device, ordinal) != CUDA_SUCCESS ||
        cuda_driver().CUMPI_CUDA_FIELD(cuDeviceGetUuid)(&found, device) != CUDA_SUCCESS) {
      return false;
    }
    KnownUuid known{ordinal, {}};
    std::memcpy(known.uuid, found.bytes, sizeof(known.uuid));
    uuids_.push_back(known);
    std::memcpy(uuid, known.uuid, sizeof(known.uuid));
    return true;
  }

  Status pin(void* host, std::size_t bytes, const PointerInfo& owner) override {
    ScopedContext scope(cuda_driver(), owner.context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    return CUMPI_CUDA_CALL(cuda_driver(), cuMemHostRegister, host, bytes, CU_MEMHOSTREGISTER_PORTABLE);
  }

  Status allocate(std::size_t bytes, const PointerInfo& owner, void** device) override {
    ScopedContext scope(cuda_driver(), owner.context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    CUdeviceptr allocation = 0;
    Status status = CUMPI_CUDA_CALL(cuda_driver(), cuMemAlloc, &allocation, bytes);
    *device = status.is_ok() ? reinterpret_cast<void*>(allocation) : nullptr;
    return status;
  }

  // Fails harmlessly where the application destroyed the context meanwhile
  // (its allocations went with it).
  void free_allocation(void* device, const PointerInfo& owner) override {
    ScopedContext scope(cuda_driver(), owner.context);
    if (scope.status().is_ok()) {
      cuda_driver().CUMPI_CUDA_FIELD(cuMemFree)(reinterpret_cast<CUdeviceptr>(device));
    }
  }

  void unpin(void* host) override {
    // Fails harmlessly when the application reset the device meanwhile: the
    // registration went with the context, the memory itself is ours.
    if (cuda_driver_found()) {
      cuda_driver().CUMPI_CUDA_FIELD(cuMemHostUnregister)(host);
    }
  }

 private:
  struct KnownUuid {
    int ordinal;
    unsigned char uuid[16];
  };
  std::mutex uuids_mutex_;
  std::vector<KnownUuid> uuids_;  // a GPU's UUID never changes
  // Stream-ordered (cudaMallocAsync) and VMM (cuMemCreate) memory belongs
  // to a device, not a context: the pointer has none. Its copies run in the
  // thread's current context when that is on the device, else in the
  // device's primary context if the application's runtime made it active
  // (never creating one). Null when neither exists: copies then fail with
  // the driver's reason.
  static void* context_for_device(int ordinal) {
    const CudaDriver& driver = cuda_driver();
    CUdevice device = 0;
    if (driver.CUMPI_CUDA_FIELD(cuDeviceGet)(&device, ordinal) != CUDA_SUCCESS) {
      return nullptr;
    }
    CUcontext current = nullptr;
    CUdevice current_device = -1;
    if (driver.CUMPI_CUDA_FIELD(cuCtxGetCurrent)(&current) == CUDA_SUCCESS && current != nullptr &&
        driver.CUMPI_CUDA_FIELD(cuCtxGetDevice)(&current_device) == CUDA_SUCCESS && current_device == device) {
      return current;
    }
    unsigned int flags = 0;
    int active = 0;
    CUcontext primary = nullptr;
    if (driver.CUMPI_CUDA_FIELD(cuDevicePrimaryCtxGetState)(device, &flags, &active) != CUDA_SUCCESS || active == 0 ||
        driver.CUMPI_CUDA_FIELD(cuDevicePrimaryCtxRetain)(&primary, device) != CUDA_SUCCESS) {
      return nullptr;
    }
    // The application's own hold keeps it alive; ours is not needed past this.
    driver.CUMPI_CUDA_FIELD(cuDevicePrimaryCtxRelease)(device);
    return primary;
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
      Status status = CUMPI_CUDA_CALL(cuda_driver(), cuPointerSetAttribute, &one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                      reinterpret_cast<CUdeviceptr>(pointer));
      if (!status.is_ok()) {
        CUMPI_LOG(debug, "%s", status.message().c_str());
      }
    }
  }

  std::mutex sync_mutex_;
  std::unordered_set<unsigned long long> sync_memops_set_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_cuda_device_memory() { return std::make_unique<CudaDeviceMemory>(); }

}  // namespace cumpi::memory
