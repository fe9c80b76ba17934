// The production backend: device memory through the CUDA driver API.
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memory/backend.h"
#include "memory/copy_batches.h"
#include "memory/copy_kernel_params.h"
#include "memory/copy_kernel_ptx.h"
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

// The largest copy the batched kernel takes (measured on the H200: it beats
// a driver copy a message up to 2 MiB, and falls behind from 4 MiB).
constexpr std::size_t kLargestByKernel = 2u << 20;

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
    info.context = context != nullptr ? context : context_for_device(ordinal);
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

  void* current_context() override {
    CUcontext context = nullptr;
    if (!driver_ready_.load(std::memory_order_acquire) ||
        driver_.CUMPI_CUDA_FIELD(cuCtxGetCurrent)(&context) != CUDA_SUCCESS) {
      return nullptr;
    }
    return context;
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

  Status start_copy(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket) override {
    ticket->context = context;
    ticket->event = nullptr;
    if (bytes == 0) {
      return Status::ok();
    }
    ScopedContext scope(driver_, context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    CUstream stream = nullptr;
    Status status = stream_for(context, &stream);
    if (status.is_ok()) {
      status = CUMPI_CUDA_CALL(driver_, cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(to),
                               reinterpret_cast<CUdeviceptr>(from), bytes, stream);
    }
    CUevent event = nullptr;
    if (status.is_ok()) {
      status = record_event(context, stream, &event);
    }
    ticket->event = event;
    return status;
  }

  // A copy the kernel would not take gains nothing from waiting for a batch:
  // it starts at once, as start_copy's (measured on the H200: a window of
  // 64 MiB pulls moved 1.11x the raw IPC copy so, 0.88x held for a batch).
  void queue_copy(void* to, const void* from, std::size_t bytes, void* context, bool both_on_device,
                  CopyTicket* ticket) override {
    if (bytes > kLargestByKernel && start_copy(to, from, bytes, context, ticket).is_ok()) {
      return;
    }
    batches_.queue(to, from, bytes, context, ticket, both_on_device);
  }

  void flush_copies() override { batches_.flush(); }

  Status poll_copy(CopyTicket* ticket, bool* finished) override {
    if (ticket->batch != nullptr) {
      return batches_.poll(ticket, finished);
    }
    *finished = true;
    if (ticket->event == nullptr) {
      return Status::ok();
    }
    auto* event = static_cast<CUevent>(ticket->event);
    const CUresult result = driver_.CUMPI_CUDA_FIELD(cuEventQuery)(event);
    if (result == CUDA_ERROR_NOT_READY) {
      *finished = false;
      return Status::ok();
    }
    release_event(ticket->context, event);
    ticket->event = nullptr;
    return cuda_status(driver_, result, "cuEventQuery");
  }

  Status wait_copy(CopyTicket* ticket) override {
    if (ticket->batch != nullptr) {
      return batches_.wait(ticket);
    }
    if (ticket->event == nullptr) {
      return Status::ok();
    }
    auto* event = static_cast<CUevent>(ticket->event);
    Status status = CUMPI_CUDA_CALL(driver_, cuEventSynchronize, event);
    release_event(ticket->context, event);
    ticket->event = nullptr;
    return status;
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
    for (auto& [context, event] : free_events_) {
      ScopedContext scope(driver_, context);
      if (scope.status().is_ok()) {
        driver_.CUMPI_CUDA_FIELD(cuEventDestroy)(event);
      }
    }
    free_events_.clear();
    for (CompletionWord& word : completion_words_) {
      if (word.host != nullptr) {
        // Fails harmlessly after a cudaDeviceReset: the memory is ours.
        driver_.CUMPI_CUDA_FIELD(cuMemHostUnregister)(const_cast<std::uint32_t*>(word.host));
        std::free(const_cast<std::uint32_t*>(word.host));
        word.host = nullptr;
        word.usable = false;
      }
    }
    std::lock_guard<std::mutex> kernels_lock(kernels_mutex_);
    for (const LoadedKernel& loaded : kernels_) {
      ScopedContext scope(driver_, loaded.context);
      if (scope.status().is_ok() && loaded.module != nullptr) {
        driver_.CUMPI_CUDA_FIELD(cuModuleUnload)(loaded.module);
      }
    }
    kernels_.clear();
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

  // Events are created once per context and reused: creating one costs a
  // driver call on the path of every message otherwise.
  Status acquire_event(void* context, CUevent* event) {
    {
      std::lock_guard<std::mutex> lock(streams_mutex_);
      for (auto it = free_events_.begin(); it != free_events_.end(); ++it) {
        if (it->first == context) {
          *event = it->second;
          free_events_.erase(it);
          return Status::ok();
        }
      }
    }
    return CUMPI_CUDA_CALL(driver_, cuEventCreate, event, CU_EVENT_DISABLE_TIMING);
  }

  void release_event(void* context, CUevent event) {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    free_events_.emplace_back(context, event);
  }

  // A pooled event of `context` recorded on `stream`: what tells that the
  // copies queued there before it are done. Null on failure.
  Status record_event(void* context, CUstream stream, CUevent* event) {
    *event = nullptr;
    CUevent acquired = nullptr;
    Status status = acquire_event(context, &acquired);
    if (!status.is_ok()) {
      return status;
    }
    status = CUMPI_CUDA_CALL(driver_, cuEventRecord, acquired, stream);
    if (!status.is_ok()) {
      release_event(context, acquired);
      return status;
    }
    *event = acquired;
    return status;
  }

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
    CUuuid uuid;
    CUdevice device = 0;
    if (!scope.status().is_ok() ||
        driver_.CUMPI_CUDA_FIELD(cuIpcGetMemHandle)(&handle, static_cast<CUdeviceptr>(owner.base)) !=
            CUDA_SUCCESS ||
        driver_.CUMPI_CUDA_FIELD(cuDeviceGet)(&device, owner.device) != CUDA_SUCCESS ||
        driver_.CUMPI_CUDA_FIELD(cuDeviceGetUuid)(&uuid, device) != CUDA_SUCCESS) {
      return false;
    }
    static_assert(sizeof(handle) == sizeof(out->exported.handle) && sizeof(uuid) == sizeof(out->exported.device_uuid));
    std::memcpy(out->exported.handle, &handle, sizeof(handle));
    std::memcpy(out->exported.device_uuid, &uuid, sizeof(uuid));
    out->exported.buffer_id = owner.buffer_id;
    out->exported.allocation_bytes = owner.size;
    return true;
  }

  // Stream-ordered (cudaMallocAsync) and VMM (cuMemCreate) memory belongs
  // to a device, not a context: the pointer has none. Its copies run in the
  // thread's current context when that is on the device, else in the
  // device's primary context if the application's runtime made it active
  // (never creating one). Null when neither exists: copies then fail with
  // the driver's reason.
  void* context_for_device(int ordinal) {
    CUdevice device = 0;
    if (driver_.CUMPI_CUDA_FIELD(cuDeviceGet)(&device, ordinal) != CUDA_SUCCESS) {
      return nullptr;
    }
    CUcontext current = nullptr;
    CUdevice current_device = -1;
    if (driver_.CUMPI_CUDA_FIELD(cuCtxGetCurrent)(&current) == CUDA_SUCCESS && current != nullptr &&
        driver_.CUMPI_CUDA_FIELD(cuCtxGetDevice)(&current_device) == CUDA_SUCCESS && current_device == device) {
      return current;
    }
    unsigned int flags = 0;
    int active = 0;
    CUcontext primary = nullptr;
    if (driver_.CUMPI_CUDA_FIELD(cuDevicePrimaryCtxGetState)(device, &flags, &active) != CUDA_SUCCESS ||
        active == 0 || driver_.CUMPI_CUDA_FIELD(cuDevicePrimaryCtxRetain)(&primary, device) != CUDA_SUCCESS) {
      return nullptr;
    }
    // The application's own hold keeps it alive; ours is not needed past this.
    driver_.CUMPI_CUDA_FIELD(cuDevicePrimaryCtxRelease)(device);
    return primary;
  }

  // One batch of queued copies: the batched copy kernel for those it suits,
  // one cuMemcpyAsync for each of the others (a large copy is fastest so:
  // measured 0.8x as fast through cuMemcpyBatchAsync); one event after them.
  Status submit_batch(void* context, const std::vector<QueuedCopy>& copies, void** recorded) {
    *recorded = nullptr;
    ScopedContext scope(driver_, context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    CUstream stream = nullptr;
    Status status = stream_for(context, &stream);
    std::vector<QueuedCopy> by_kernel;
    std::vector<QueuedCopy> by_driver;
    CUfunction kernel = status.is_ok() ? copy_kernel(context) : nullptr;
    for (const QueuedCopy& copy : copies) {
      (kernel != nullptr && suits_copy_kernel(copy) ? by_kernel : by_driver).push_back(copy);
    }
    if (status.is_ok() && !by_kernel.empty()) {
      status = launch_copy_kernel(kernel, by_kernel, stream);
    }
    if (status.is_ok()) {
      for (const QueuedCopy& copy : by_driver) {
        status = CUMPI_CUDA_CALL(driver_, cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(copy.to),
                                 reinterpret_cast<CUdeviceptr>(copy.from), copy.bytes, stream);
        if (!status.is_ok()) {
          break;
        }
      }
    }
    CUevent event = nullptr;
    if (status.is_ok()) {
      status = record_event(context, stream, &event);
    }
    if (event != nullptr) {
      *recorded = new BatchCompletion{event, nullptr, 0, steady_now_ns()};
      write_completion_word(context, stream, static_cast<BatchCompletion*>(*recorded));
    }
    return status;
  }

  // What tells that a submitted batch is done.
  struct BatchCompletion {
    CUevent event;
    volatile std::uint32_t* word;  // null: the event alone
    std::uint32_t sequence;
    std::uint64_t submitted_ns;
  };
  struct CompletionWord {
    void* context = nullptr;
    volatile std::uint32_t* host = nullptr;
    CUdeviceptr device = 0;
    std::uint32_t next = 0;  // the last sequence number written; batches are submitted one at a time
    bool usable = false;
  };
  static constexpr std::size_t kCompletionPage = 4096;
  static constexpr std::uint64_t kWordTrustNs = 100000;
  static std::uint64_t steady_now_ns() { return CopyDevice::steady_now_ns(); }

  // After a batch's copies the stream writes the context's next sequence
  // number into a host word (with a memory fence first): a poll that reads
  // it needs no driver call, and a small copy is seen done about a
  // microsecond sooner than through its event (small_copy_floors).
  void write_completion_word(void* context, CUstream stream, BatchCompletion* completion) {
    CompletionWord* word = completion_word(context);
    if (word == nullptr) {
      return;
    }
    const std::uint32_t sequence = word->next + 1;
    Status status = CUMPI_CUDA_CALL(driver_, cuStreamWriteValue32, stream, word->device, sequence,
                                    CU_STREAM_WRITE_VALUE_DEFAULT);
    if (!status.is_ok()) {
      CUMPI_LOG(debug, "completion words off in this context: %s", status.message().c_str());
      word->usable = false;
      return;
    }
    word->next = sequence;
    completion->word = word->host;
    completion->sequence = sequence;
  }

  // The context's completion word (registered host memory of cumpi's own,
  // which survives a cudaDeviceReset as the staging memory does); null
  // where it cannot be had. Called with the context current.
  CompletionWord* completion_word(void* context) {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    for (CompletionWord& known : completion_words_) {
      if (known.context == context) {
        return known.usable ? &known : nullptr;
      }
    }
    CompletionWord& word = completion_words_.emplace_back();
    word.context = context;
    void* page = std::aligned_alloc(kCompletionPage, kCompletionPage);
    if (page == nullptr) {
      return nullptr;
    }
    std::memset(page, 0, kCompletionPage);
    CUdeviceptr device = 0;
    Status status = CUMPI_CUDA_CALL(driver_, cuMemHostRegister, page, kCompletionPage,
                                    CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (status.is_ok()) {
      status = CUMPI_CUDA_CALL(driver_, cuMemHostGetDevicePointer, &device, page, 0);
      if (!status.is_ok()) {
        driver_.CUMPI_CUDA_FIELD(cuMemHostUnregister)(page);
      }
    }
    if (!status.is_ok()) {
      CUMPI_LOG(debug, "completion words off in this context: %s", status.message().c_str());
      std::free(page);
      return nullptr;
    }
    word.host = static_cast<volatile std::uint32_t*>(page);
    word.device = device;
    word.usable = true;
    return &word;
  }

  // A batch is done once its word arrived; until kWordTrustNs after
  // submission only the word is read (no driver call), then the event is
  // asked too: a copy that failed never writes the word.
  Status query_batch(void* handle, bool* complete) {
    auto* completion = static_cast<BatchCompletion*>(handle);
    if (completion->word != nullptr) {
      *complete = static_cast<std::int32_t>(*completion->word - completion->sequence) >= 0;
      if (*complete || steady_now_ns() - completion->submitted_ns < kWordTrustNs) {
        return Status::ok();
      }
    }
    const CUresult result = driver_.CUMPI_CUDA_FIELD(cuEventQuery)(completion->event);
    *complete = result != CUDA_ERROR_NOT_READY;
    return *complete ? cuda_status(driver_, result, "cuEventQuery") : Status::ok();
  }

  // The kernel takes device-to-device copies up to kLargestByKernel with
  // both ends 16-byte aligned (in vectors, a byte tail after them), and
  // unaligned ones up to kLargestUnalignedByKernel (bytewise): for a small
  // copy a launch is about a microsecond sooner done than cuMemcpyAsync
  // (an 8-byte message took 15.9 us by the driver's copy, 16 bytes 14.5 us
  // by the kernel, H200 under MPS).
  static constexpr std::size_t kLargestUnalignedByKernel = 4096;
  static bool both_aligned(const QueuedCopy& copy) {
    return ((reinterpret_cast<std::uintptr_t>(copy.to) | reinterpret_cast<std::uintptr_t>(copy.from)) & 15) == 0;
  }
  bool suits_copy_kernel(const QueuedCopy& copy) {
    return copy.bytes <= (both_aligned(copy) ? kLargestByKernel : kLargestUnalignedByKernel) &&
           (copy.both_on_device ||
            (query(copy.to).kind == MemoryKind::device && query(copy.from).kind == MemoryKind::device));
  }

  // One launch per CUMPI_COPY_BATCH_MOST copies: blockIdx.y picks the copy,
  // enough x blocks for the largest to take 4 vectors a thread (one round
  // of the kernel's loop: latency, not launch size, is what small copies
  // pay), up to two blocks a multiprocessor's worth for the largest.
  Status launch_copy_kernel(CUfunction kernel, const std::vector<QueuedCopy>& copies, CUstream stream) {
    constexpr unsigned kThreads = 256;
    constexpr unsigned long long kVectorsPerBlock = kThreads * 4;
    constexpr unsigned long long kMostBlocks = 264;
    for (std::size_t first = 0; first < copies.size(); first += CUMPI_COPY_BATCH_MOST) {
      const std::size_t count = std::min<std::size_t>(CUMPI_COPY_BATCH_MOST, copies.size() - first);
      cumpi_copy_batch_params params{};
      unsigned long long most_vectors = 0;
      for (std::size_t i = 0; i < count; ++i) {
        const QueuedCopy& copy = copies[first + i];
        const unsigned long long vectors = both_aligned(copy) ? copy.bytes / 16 : 0;
        params.copies[i] = cumpi_copy_descriptor{reinterpret_cast<std::uintptr_t>(copy.from),
                                                 reinterpret_cast<std::uintptr_t>(copy.to), vectors,
                                                 copy.bytes - vectors * 16};
        most_vectors = std::max(most_vectors, params.copies[i].vectors);
      }
      const auto blocks = static_cast<unsigned>(
          std::clamp((most_vectors + kVectorsPerBlock - 1) / kVectorsPerBlock, 1ULL, kMostBlocks));
      void* arguments[] = {&params};
      Status status = CUMPI_CUDA_CALL(driver_, cuLaunchKernel, kernel, blocks, static_cast<unsigned>(count), 1,
                                      kThreads, 1, 1, 0, stream, arguments, nullptr);
      if (!status.is_ok()) {
        return status;
      }
    }
    return Status::ok();
  }

  // The batched copy kernel in `context` (current), loaded on first use;
  // null where it cannot be: no PTX built in, a driver too old for it.
  CUfunction copy_kernel(void* context) {
    std::lock_guard<std::mutex> lock(kernels_mutex_);
    for (const LoadedKernel& loaded : kernels_) {
      if (loaded.context == context) {
        return loaded.function;
      }
    }
    LoadedKernel loaded{context, nullptr, nullptr};
    if (const char* ptx = copy_kernel_ptx()) {
      Status status = CUMPI_CUDA_CALL(driver_, cuModuleLoadData, &loaded.module, ptx);
      if (status.is_ok()) {
        status = CUMPI_CUDA_CALL(driver_, cuModuleGetFunction, &loaded.function, loaded.module, "cumpi_copy_batch");
      }
      if (!status.is_ok()) {
        CUMPI_LOG(info, "%s; copies go by the driver's own calls", status.message().c_str());
        loaded.function = nullptr;
      }
    }
    kernels_.push_back(loaded);
    return loaded.function;
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
      CUdevice device = 0;
      CUuuid candidate;
      if (driver_.CUMPI_CUDA_FIELD(cuDeviceGet)(&device, ordinal) != CUDA_SUCCESS ||
          driver_.CUMPI_CUDA_FIELD(cuDeviceGetUuid)(&candidate, device) != CUDA_SUCCESS ||
          std::memcmp(candidate.bytes, uuid, sizeof(candidate.bytes)) != 0) {
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
  std::vector<std::pair<void*, CUevent>> free_events_;
  std::deque<CompletionWord> completion_words_;  // under streams_mutex_; a deque: elements never move
  struct LoadedKernel {
    void* context;
    CUmodule module;
    CUfunction function;
  };
  std::mutex kernels_mutex_;
  std::vector<LoadedKernel> kernels_;
  static constexpr std::size_t kExportsKept = 64;
  std::mutex exports_mutex_;
  std::vector<ExportedAllocation> exports_;
  std::size_t next_export_slot_ = 0;
  CopyBatches batches_{CopyDevice{
      [this](void* context, const std::vector<QueuedCopy>& copies, void** event) {
        return submit_batch(context, copies, event);
      },
      [this](void* completion, bool* complete) { return query_batch(completion, complete); },
      [this](void* completion) {
        return CUMPI_CUDA_CALL(driver_, cuEventSynchronize, static_cast<BatchCompletion*>(completion)->event);
      },
      [this](void* context, void* completion) {
        auto* done = static_cast<BatchCompletion*>(completion);
        release_event(context, done->event);
        delete done;
      }}};
  std::mutex sync_mutex_;
  std::unordered_set<unsigned long long> sync_memops_set_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace cumpi::memory
