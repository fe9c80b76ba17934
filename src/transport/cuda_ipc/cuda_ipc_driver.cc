// CUDA IPC through the driver API: exporting an allocation (the export kept
// by buffer id), opening and closing a peer's, whether the sender's GPU is
// reachable from here, and whether two processes share a GPU without MPS.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "memory/cuda_driver.h"
#include "memory/cuda_scoped_context.h"
#include "memory/device_memory.h"
#include "runtime/log.h"
#include "transport/cuda_ipc/ipc_driver.h"

namespace cumpi::transport {

namespace {

using memory::CudaDriver;
using memory::PointerInfo;
using memory::ScopedContext;

class CudaIpcDriver final : public IpcDriver {
 public:
  bool export_ipc(const void* pointer, const PointerInfo& owner, IpcExport* out) override {
    ExportedAllocation allocation;
    if (!exported_allocation(pointer, owner, &allocation) || !allocation.exportable) {
      return false;  // pool (cudaMallocAsync) or VMM (cuMemCreate) memory
    }
    *out = allocation.exported;
    out->offset = reinterpret_cast<std::uintptr_t>(pointer) - owner.base;
    return true;
  }

  Status open_ipc(const IpcExport& exported, int, const PointerInfo& destination, void** mapped_base) override {
    ScopedContext scope(driver_, destination.context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    Status status = check_peer_reachable(exported.device_uuid);
    if (!status.is_ok()) {
      return status;
    }
    CUipcMemHandle handle;
    std::memcpy(&handle, exported.handle, sizeof(handle));
    CUdeviceptr base = 0;
    status = CUMPI_CUDA_CALL(driver_, cuIpcOpenMemHandle, &base, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    *mapped_base = reinterpret_cast<void*>(base);
    return status;
  }

  void close_ipc(void* mapped_base, void* context) override {
    ScopedContext scope(driver_, context);
    if (scope.status().is_ok()) {
      Status status = CUMPI_CUDA_CALL(driver_, cuIpcCloseMemHandle, reinterpret_cast<CUdeviceptr>(mapped_base));
      if (!status.is_ok()) {
        CUMPI_LOG(debug, "%s", status.message().c_str());
      }
    }
  }

  bool shares_gpu_without_mps(const IpcExport& exported, void* context) override {
    ScopedContext scope(driver_, context);
    CUdevice mine = 0;
    CUuuid uuid;
    int mps = 0;
    return scope.status().is_ok() && driver_.CUMPI_CUDA_FIELD(cuCtxGetDevice)(&mine) == CUDA_SUCCESS &&
           driver_.CUMPI_CUDA_FIELD(cuDeviceGetUuid)(&uuid, mine) == CUDA_SUCCESS &&
           std::memcmp(uuid.bytes, exported.device_uuid, sizeof(uuid.bytes)) == 0 &&
           driver_.CUMPI_CUDA_FIELD(cuDeviceGetAttribute)(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, mine) ==
               CUDA_SUCCESS &&
           mps == 0;
  }

 private:
  // What export_ipc needs of an allocation, kept by buffer id (unique for
  // the life of the process, so an entry never goes stale): a send then
  // costs no driver call to export.
  struct ExportedAllocation {
    unsigned long long buffer_id = 0;
    bool exportable = false;
    IpcExport exported;
  };

  bool exported_allocation(const void* pointer, const PointerInfo& owner, ExportedAllocation* out) {
    {
      std::lock_guard<std::mutex> lock(exports_mutex_);
      for (const ExportedAllocation& known : exports_) {
        if (owner.buffer_id != 0 && known.buffer_id == owner.buffer_id) {
          *out = known;
          return true;
        }
      }
    }
    if (!export_allocation(pointer, owner, out)) {
      return false;
    }
    if (owner.buffer_id != 0) {
      std::lock_guard<std::mutex> lock(exports_mutex_);
      if (exports_.size() < kExportsKept) {
        exports_.push_back(*out);
      } else {
        exports_[next_export_slot_++ % kExportsKept] = *out;
      }
    }
    return true;
  }

  // False when the driver cannot tell; out->exportable false for memory
  // that legacy IPC cannot export.
  bool export_allocation(const void* pointer, const PointerInfo& owner, ExportedAllocation* out) {
    out->buffer_id = owner.buffer_id;
    int capable = 0;
    if (driver_.CUMPI_CUDA_FIELD(cuPointerGetAttribute)(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                                        reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS) {
      return false;
    }
    out->exportable = capable != 0;
    if (!out->exportable) {
      return true;
    }
    ScopedContext scope(driver_, owner.context);
    CUipcMemHandle handle;
    if (!scope.status().is_ok() ||
        driver_.CUMPI_CUDA_FIELD(cuIpcGetMemHandle)(&handle, static_cast<CUdeviceptr>(owner.base)) != CUDA_SUCCESS ||
        !memory::device_memory().device_uuid(owner.device, out->exported.device_uuid)) {
      return false;
    }
    static_assert(sizeof(handle) == sizeof(out->exported.handle));
    std::memcpy(out->exported.handle, &handle, sizeof(handle));
    out->exported.buffer_id = owner.buffer_id;
    out->exported.allocation_bytes = owner.size;
    return true;
  }

  // Declines (an error naming the reason) unless the GPU with `uuid` is the
  // current context's or one it can reach as a peer.
  Status check_peer_reachable(const unsigned char* uuid) {
    CUdevice mine = 0;
    Status status = CUMPI_CUDA_CALL(driver_, cuCtxGetDevice, &mine);
    int count = 0;
    if (status.is_ok()) {
      status = CUMPI_CUDA_CALL(driver_, cuDeviceGetCount, &count);
    }
    for (int ordinal = 0; status.is_ok() && ordinal < count; ++ordinal) {
      unsigned char candidate[16];
      CUdevice device = 0;
      if (!memory::device_memory().device_uuid(ordinal, candidate) || std::memcmp(candidate, uuid, 16) != 0 ||
          driver_.CUMPI_CUDA_FIELD(cuDeviceGet)(&device, ordinal) != CUDA_SUCCESS) {
        continue;
      }
      if (device == mine) {
        return Status::ok();
      }
      int can_access = 0;
      status = CUMPI_CUDA_CALL(driver_, cuDeviceCanAccessPeer, &can_access, mine, device);
      if (status.is_ok() && can_access == 0) {
        return Status::error(StatusCode::unreachable, "the sender's GPU " + std::to_string(ordinal) +
                                                          " is not peer-accessible from GPU " + std::to_string(mine));
      }
      return status;
    }
    return status.is_ok() ? Status::error(StatusCode::unreachable, "the sender's GPU is not visible in this process")
                          : status;
  }

  const CudaDriver& driver_ = memory::cuda_driver();
  static constexpr std::size_t kExportsKept = 64;
  std::mutex exports_mutex_;
  std::vector<ExportedAllocation> exports_;
  std::size_t next_export_slot_ = 0;
};

}  // namespace

// libcumpi.so's.
IpcDriver& ipc_driver() {
  static CudaIpcDriver* instance = new CudaIpcDriver();  // lives until process exit
  return *instance;
}

}  // namespace cumpi::transport
