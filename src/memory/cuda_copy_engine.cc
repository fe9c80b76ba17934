// Copies through the CUDA driver API: cumpi's stream per context, pooled
// events, batches of queued copies (the batched copy kernel for small
// device-to-device ones) and completion words.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "memory/copy_batches.h"
#include "memory/copy_engine.h"
#include "memory/copy_kernel_params.h"
#include "memory/copy_kernel_ptx.h"
#include "memory/cuda_driver.h"
#include "memory/cuda_scoped_context.h"
#include "memory/kernel_registry.h"
#include "memory/reduction_kernel_ptx.h"
#include "runtime/log.h"

namespace cumpi::memory {

namespace {
// The largest copy the batched kernel takes (measured on the H200: it beats
// a driver copy a message up to 2 MiB, and falls behind from 4 MiB).
constexpr std::size_t kLargestByKernel = 2u << 20;

constexpr KernelSource kCopyBatchKernel{"cumpi_copy_batch", copy_kernel_ptx};
constexpr KernelSource kReduceKernel{"cumpi_reduce", reduction_kernel_ptx};

class CudaCopyEngine final : public CopyEngine {
 public:
  explicit CudaCopyEngine(DeviceMemory& memory) : memory_(memory) {}

  Status copy_to_host(void* host, const void* device, std::size_t bytes, const PointerInfo& owner) override {
    return copy(
        owner,
        [&](CUstream stream) {
          return CUMPI_CUDA_CALL(driver_, cuMemcpyDtoHAsync, host, reinterpret_cast<CUdeviceptr>(device), bytes,
                                 stream);
        },
        bytes);
  }

  Status copy_to_device(void* device, const void* host, std::size_t bytes, const PointerInfo& owner) override {
    return copy(
        owner,
        [&](CUstream stream) {
          return CUMPI_CUDA_CALL(driver_, cuMemcpyHtoDAsync, reinterpret_cast<CUdeviceptr>(device), host, bytes,
                                 stream);
        },
        bytes);
  }

  Status start_copy(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket) override {
    ticket->context = context;
    ticket->event = nullptr;
    if (bytes == 0) {
      return Status::ok();
    }
    return enqueue_recorded(context, ticket, [&](CUstream stream) {
      return CUMPI_CUDA_CALL(driver_, cuMemcpyAsync, reinterpret_cast<CUdeviceptr>(to),
                             reinterpret_cast<CUdeviceptr>(from), bytes, stream);
    });
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

  bool reductions_available(void* context) override {
    ScopedContext scope(driver_, context);
    return scope.status().is_ok() && kernels_.function(context, kReduceKernel) != nullptr;
  }

  // 256 threads a block, a block per 256 elements up to eight blocks a
  // multiprocessor of the largest GPUs; the grid-stride loop does the rest.
  Status start_reduction(const ReductionJob& job, void* context, CopyTicket* ticket) override {
    constexpr unsigned kThreads = 256;
    constexpr unsigned long long kMostBlocks = 132 * 8;
    ticket->context = context;
    ticket->event = nullptr;
    if (job.count == 0) {
      return Status::ok();
    }
    return enqueue_recorded(context, ticket, [&](CUstream stream) {
      CUfunction kernel = kernels_.function(context, kReduceKernel);
      if (kernel == nullptr) {
        return Status::error(StatusCode::internal, "the reduction kernel is not available in this context");
      }
      cumpi_reduce_params params = reduction_params(job);
      const auto blocks =
          static_cast<unsigned>(std::clamp<unsigned long long>((job.count + kThreads - 1) / kThreads, 1, kMostBlocks));
      void* arguments[] = {&params};
      return CUMPI_CUDA_CALL(driver_, cuLaunchKernel, kernel, blocks, 1, 1, kThreads, 1, 1, 0, stream, arguments,
                             nullptr);
    });
  }

  bool has_streams() const override { return true; }

  Status start_on_stream(void* context, const StreamWork& work, CopyTicket* ticket) override {
    ticket->context = context;
    ticket->event = nullptr;
    return enqueue_recorded(context, ticket, [&](CUstream stream) { return work(stream); });
  }

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
    kernels_.unload_all();
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

  // With `context` current: `enqueue(stream)` on cumpi's stream of it, then
  // an event after it in the ticket (the ticket's context is set already).
  template <typename Enqueue>
  Status enqueue_recorded(void* context, CopyTicket* ticket, Enqueue enqueue) {
    ScopedContext scope(driver_, context);
    if (!scope.status().is_ok()) {
      return scope.status();
    }
    CUstream stream = nullptr;
    Status status = stream_for(context, &stream);
    if (status.is_ok()) {
      status = enqueue(stream);
    }
    CUevent event = nullptr;
    if (status.is_ok()) {
      status = record_event(context, stream, &event);
    }
    ticket->event = event;
    return status;
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
    CUfunction kernel = status.is_ok() ? kernels_.function(context, kCopyBatchKernel) : nullptr;
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
    Status status =
        CUMPI_CUDA_CALL(driver_, cuStreamWriteValue32, stream, word->device, sequence, CU_STREAM_WRITE_VALUE_DEFAULT);
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
            (memory_.query(copy.to).kind == MemoryKind::device && memory_.query(copy.from).kind == MemoryKind::device));
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
        params.copies[i] =
            cumpi_copy_descriptor{reinterpret_cast<std::uintptr_t>(copy.from),
                                  reinterpret_cast<std::uintptr_t>(copy.to), vectors, copy.bytes - vectors * 16};
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

  const CudaDriver& driver_ = cuda_driver();
  DeviceMemory& memory_;
  std::mutex streams_mutex_;
  std::vector<std::pair<void*, CUstream>> streams_;
  std::vector<std::pair<void*, CUevent>> free_events_;
  std::deque<CompletionWord> completion_words_;  // under streams_mutex_; a deque: elements never move
  KernelRegistry kernels_;
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
};

}  // namespace

std::unique_ptr<CopyEngine> make_cuda_copy_engine(DeviceMemory& memory) {
  return std::make_unique<CudaCopyEngine>(memory);
}

}  // namespace cumpi::memory
