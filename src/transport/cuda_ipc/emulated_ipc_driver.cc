// CUDA IPC in the host emulation (test library only): the handle is the
// number of the allocation's memfd, which the receiver opens through
// /proc/<pid>/fd (the ranks of a test run as one user) and maps; a real
// shared mapping, as a CUDA IPC mapping is.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "memory/emulated_gpu.h"
#include "transport/cuda_ipc/ipc_driver.h"

namespace cumpi::transport {

namespace {

using memory::PointerInfo;

class EmulatedIpcDriver final : public IpcDriver {
 public:
  bool export_ipc(const void* pointer, const PointerInfo& owner, IpcExport* out) override {
    memory::EmulatedExport found;
    if (!memory::find_emulated_export(pointer, &found)) {
      return false;
    }
    std::memcpy(out->handle, &found.fd, sizeof(found.fd));
    out->buffer_id = owner.buffer_id;
    out->allocation_bytes = found.mapped_bytes;
    out->offset = found.offset;
    return true;
  }

  Status open_ipc(const IpcExport& exported, int sender_pid, const PointerInfo&, void** mapped_base) override {
    int fd_number = -1;
    std::memcpy(&fd_number, exported.handle, sizeof(fd_number));
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", sender_pid, fd_number);
    const int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      return Status::error(StatusCode::internal, std::string("cannot open ") + path + ": " + std::strerror(errno));
    }
    void* mapped = mmap(nullptr, exported.allocation_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped == MAP_FAILED) {
      return Status::error(StatusCode::internal, std::string("mmap of ") + path + ": " + std::strerror(errno));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    mapped_sizes_[mapped] = exported.allocation_bytes;
    *mapped_base = mapped;
    return Status::ok();
  }

  void close_ipc(void* mapped_base, void*) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = mapped_sizes_.find(mapped_base);
    if (it != mapped_sizes_.end()) {
      munmap(mapped_base, it->second);
      mapped_sizes_.erase(it);
    }
  }

  bool shares_gpu_without_mps(const IpcExport&, void*) override { return false; }

 private:
  std::mutex mutex_;
  std::map<void*, std::size_t> mapped_sizes_;
};

}  // namespace

IpcDriver& ipc_driver() {
  static EmulatedIpcDriver* instance = new EmulatedIpcDriver();  // lives until process exit
  return *instance;
}

}  // namespace cumpi::transport
