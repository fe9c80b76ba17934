// The host emulation of a GPU (DESIGN §6), compiled only into the test
// library libcumpi_emu.so: its device memory and its copy engine. Device
// memory is a memfd mapped twice: a PROT_NONE view whose address is the
// "device pointer" (the CPU faults on it, as on a real device pointer, so a
// device buffer leaking to MPI crashes the test) and a read-write view the
// copies go through. Its IPC is transport/cuda_ipc/emulated_ipc_driver.cc.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "cumpi/emulation.h"
#include "memory/copy_batches.h"
#include "memory/copy_engine.h"
#include "memory/device_memory.h"
#include "memory/emulated_gpu.h"
#include "memory/freed_device_ranges.h"

namespace cumpi::memory {

namespace {

struct EmulatedAllocation {
  std::uintptr_t device_view = 0;
  char* backing = nullptr;
  std::size_t mapped_bytes = 0;
  std::size_t requested_bytes = 0;
  int fd = -1;
  unsigned long long buffer_id = 0;
};

std::size_t round_to_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return bytes == 0 ? page : (bytes + page - 1) / page * page;
}

// Stands for the CUcontext of all emulated allocations.
char g_emulated_context;
// Stands for the event of an emulated copy in flight.
char g_copy_in_flight;

class EmulatedGpu final : public DeviceMemory, public CopyEngine {
 public:
  const char* name() const override { return "emulation"; }

  bool device_memory_possible() override { return any_allocation_.load(std::memory_order_acquire); }

  PointerInfo query(const void* pointer) override {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const EmulatedAllocation* found = find(pointer);
    PointerInfo info;
    if (found == nullptr) {
      return freed_or_host(pointer);
    }
    info.kind = MemoryKind::device;
    info.context = &g_emulated_context;
    info.buffer_id = found->buffer_id;
    info.base = found->device_view;
    info.size = found->requested_bytes;
    info.device = 0;
    saw_device_allocation(info.base, info.size);
    return info;
  }

  Status copy_to_host(void* host, const void* device, std::size_t bytes, const PointerInfo&) override {
    return copy_through_backing(host, device, bytes, "cuMemcpyDtoHAsync");
  }

  Status copy_to_device(void* device, const void* host, std::size_t bytes, const PointerInfo&) override {
    return copy_through_backing(device, host, bytes, "cuMemcpyHtoDAsync");
  }

  void* current_context() override { return device_memory_possible() ? &g_emulated_context : nullptr; }

  // The copy is done at once, but reported finished only at the second poll:
  // as on a GPU, the engine's asynchronous paths see copies in flight.
  Status start_copy(void* to, const void* from, std::size_t bytes, void*, CopyTicket* ticket) override {
    ticket->event = bytes == 0 ? nullptr : &g_copy_in_flight;
    ticket->context = nullptr;
    return copy_through_backing(to, from, bytes, "cuMemcpyAsync");
  }

  // Queued copies are done when their batch is submitted (see batches_).
  void queue_copy(void* to, const void* from, std::size_t bytes, void* context, bool both_on_device,
                  CopyTicket* ticket) override {
    batches_.queue(to, from, bytes, context, ticket, both_on_device);
  }

  void flush_copies() override { batches_.flush(); }

  bool reductions_available(void*) override { return true; }

  // The "kernel" runs on the host, on the read-write views of the buffers.
  Status start_reduction(const ReductionJob& job, void*, CopyTicket* ticket) override {
    ticket->event = job.count == 0 ? nullptr : &g_copy_in_flight;
    ticket->context = nullptr;
    if (job.count == 0) {
      return Status::ok();
    }
    if (injected_failures_.load() > 0 && injected_failures_.fetch_sub(1) > 0) {
      return Status::error(StatusCode::cuda_error,
                           "cuLaunchKernel failed: injected by cumpi_emu_fail_next_copies (emulated)");
    }
    const std::size_t bytes = job.count * element_bytes(job.type);
    ReductionJob on_host = job;
    on_host.output = accessible(job.output, bytes);
    bool reachable = on_host.output != nullptr;
    for (int i = 0; i < job.input_count; ++i) {
      on_host.inputs[i] = accessible(job.inputs[i], bytes);
      reachable = reachable && on_host.inputs[i] != nullptr;
    }
    if (!reachable) {
      return Status::error(StatusCode::cuda_error,
                           "cuLaunchKernel failed: an illegal memory access was encountered (emulated)");
    }
    reduce_on_host(on_host);
    return Status::ok();
  }

  bool has_streams() const override { return false; }

  Status start_on_stream(void*, const StreamWork&, CopyTicket* ticket) override {
    ticket->event = nullptr;
    return Status::error(StatusCode::internal, "the emulated GPU has no CUDA streams");
  }

  Status poll_copy(CopyTicket* ticket, bool* finished) override {
    if (ticket->batch != nullptr) {
      return batches_.poll(ticket, finished);
    }
    *finished = ticket->event == nullptr || ticket->context != nullptr;
    ticket->context = &g_copy_in_flight;  // polled once
    if (*finished) {
      ticket->event = nullptr;
    }
    return Status::ok();
  }

  Status wait_copy(CopyTicket* ticket) override {
    if (ticket->batch != nullptr) {
      return batches_.wait(ticket);
    }
    ticket->event = nullptr;
    return Status::ok();
  }

  Status pin(void*, std::size_t, const PointerInfo&) override { return Status::ok(); }
  void unpin(void*) override {}
  Status allocate(std::size_t bytes, const PointerInfo&, void** device) override {
    *device = allocate(bytes);
    return *device != nullptr ? Status::ok()
                              : Status::error(StatusCode::cuda_error, "cuMemAlloc failed: out of memory (emulated)");
  }
  void free_allocation(void* device, const PointerInfo&) override { release(device); }
  void shutdown() override {}

  void* allocate(std::size_t bytes) {
    const std::size_t mapped = round_to_pages(bytes);
    const int fd = memfd_create("cumpi-emulated-device", MFD_CLOEXEC);
    if (fd < 0) {
      return nullptr;
    }
    if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
      close(fd);
      return nullptr;
    }
    void* device_view = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED, fd, 0);
    void* backing = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (device_view == MAP_FAILED || backing == MAP_FAILED) {
      if (device_view != MAP_FAILED) munmap(device_view, mapped);
      if (backing != MAP_FAILED) munmap(backing, mapped);
      close(fd);
      return nullptr;
    }
    EmulatedAllocation allocation;
    allocation.device_view = reinterpret_cast<std::uintptr_t>(device_view);
    allocation.backing = static_cast<char*>(backing);
    allocation.mapped_bytes = mapped;
    allocation.requested_bytes = bytes;
    allocation.fd = fd;
    {
      std::unique_lock<std::shared_mutex> lock(mutex_);
      allocation.buffer_id = ++last_buffer_id_;
      allocations_[allocation.device_view] = allocation;
    }
    any_allocation_.store(true, std::memory_order_release);
    return device_view;
  }

  int release(void* device) {
    EmulatedAllocation allocation;
    {
      std::unique_lock<std::shared_mutex> lock(mutex_);
      auto it = allocations_.find(reinterpret_cast<std::uintptr_t>(device));
      if (it == allocations_.end()) {
        return -1;
      }
      allocation = it->second;
      allocations_.erase(it);
    }
    munmap(reinterpret_cast<void*>(allocation.device_view), allocation.mapped_bytes);
    munmap(allocation.backing, allocation.mapped_bytes);
    close(allocation.fd);
    return 0;
  }

  // Host address through which `pointer` (device or host) can be accessed
  // for `bytes`; nullptr when a device range runs past its allocation.
  char* accessible(const void* pointer, std::size_t bytes) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const EmulatedAllocation* found = find(pointer);
    if (found == nullptr) {
      return static_cast<char*>(const_cast<void*>(pointer));
    }
    const std::size_t offset = reinterpret_cast<std::uintptr_t>(pointer) - found->device_view;
    if (offset + bytes > found->requested_bytes) {
      return nullptr;
    }
    return found->backing + offset;
  }

  void fail_next_copies(int count) { injected_failures_.store(count); }

  bool exported(const void* pointer, EmulatedExport* out) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const EmulatedAllocation* found = find(pointer);
    if (found == nullptr) {
      return false;
    }
    *out =
        EmulatedExport{found->fd, found->mapped_bytes, reinterpret_cast<std::uintptr_t>(pointer) - found->device_view};
    return true;
  }

 private:
  const EmulatedAllocation* find(const void* pointer) const {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    auto it = allocations_.upper_bound(address);
    if (it == allocations_.begin()) {
      return nullptr;
    }
    --it;
    const EmulatedAllocation& candidate = it->second;
    return address < candidate.device_view + candidate.mapped_bytes ? &candidate : nullptr;
  }

  Status copy_through_backing(void* destination, const void* source, std::size_t bytes, const char* call) {
    if (bytes == 0) {
      return Status::ok();
    }
    if (injected_failures_.load() > 0 && injected_failures_.fetch_sub(1) > 0) {
      return Status::error(StatusCode::cuda_error,
                           std::string(call) + " failed: injected by cumpi_emu_fail_next_copies (emulated)");
    }
    char* to = accessible(destination, bytes);
    const char* from = accessible(source, bytes);
    if (to == nullptr || from == nullptr) {
      return Status::error(StatusCode::cuda_error,
                           std::string(call) + " failed: an illegal memory access was encountered (emulated)");
    }
    std::memcpy(to, from, bytes);
    return Status::ok();
  }

  std::shared_mutex mutex_;
  std::map<std::uintptr_t, EmulatedAllocation> allocations_;
  unsigned long long last_buffer_id_ = 0;
  std::atomic<bool> any_allocation_{false};
  std::atomic<int> injected_failures_{0};
  // A batch is copied when submitted and reported complete at its second
  // query, as if it ran while the engine went on.
  CopyBatches batches_{
      CopyDevice{[this](void*, const std::vector<QueuedCopy>& copies, void** event) {
                   *event = new int(0);  // queries so far
                   for (const QueuedCopy& copy : copies) {
                     Status status = copy_through_backing(copy.to, copy.from, copy.bytes, "cuMemcpyAsync");
                     if (!status.is_ok()) {
                       return status;
                     }
                   }
                   return Status::ok();
                 },
                 [](void* event, bool* complete) {
                   *complete = ++*static_cast<int*>(event) >= 2;
                   return Status::ok();
                 },
                 [](void*) { return Status::ok(); }, [](void*, void* event) { delete static_cast<int*>(event); }}};
};

EmulatedGpu& emulation() {
  static EmulatedGpu* instance = new EmulatedGpu();  // lives until process exit
  return *instance;
}

}  // namespace

DeviceMemory& device_memory() { return emulation(); }

CopyEngine& copy_engine() { return emulation(); }

bool find_emulated_export(const void* pointer, EmulatedExport* out) { return emulation().exported(pointer, out); }

}  // namespace cumpi::memory

extern "C" {

void* cumpi_emu_malloc(size_t bytes) { return cumpi::memory::emulation().allocate(bytes); }

int cumpi_emu_free(void* device) { return cumpi::memory::emulation().release(device); }

int cumpi_emu_memcpy(void* destination, const void* source, size_t bytes) {
  char* to = cumpi::memory::emulation().accessible(destination, bytes);
  const char* from = cumpi::memory::emulation().accessible(source, bytes);
  if (to == nullptr || from == nullptr) {
    return -1;
  }
  std::memmove(to, from, bytes);
  return 0;
}

void cumpi_emu_fail_next_copies(int count) { cumpi::memory::emulation().fail_next_copies(count); }

}  // extern "C"
