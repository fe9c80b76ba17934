#include "transport/cuda_ipc/cuda_ipc_transport.h"

#include <cstring>

#include "memory/copy_engine.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "transport/cuda_ipc/ipc_cache.h"

namespace cumpi::transport {

namespace {

static_assert(sizeof(IpcExport) <= kBlobBytes, "an IPC export must fit the envelope");

IpcExport read_export(const Blob& blob) {
  IpcExport exported;
  std::memcpy(&exported, blob.bytes, sizeof(exported));
  return exported;
}

// One copy out of the sender's mapped allocation; the mapping is held until
// the copy finished.
class IpcCopy final : public Transfer {
 public:
  IpcCopy(IpcMapping* mapping) : mapping_(mapping) {}
  ~IpcCopy() override {
    if (mapping_ != nullptr) {
      Status ignored = memory::copy_engine().wait_copy(&ticket);
      (void)ignored;
      ipc_cache().release(mapping_);
    }
  }
  IpcCopy(const IpcCopy&) = delete;
  IpcCopy& operator=(const IpcCopy&) = delete;

  bool advance(Status* error) override {
    bool done = false;
    Status status = memory::copy_engine().poll_copy(&ticket, &done);
    if (!status.is_ok()) {
      *error = std::move(status);
      done = true;
    }
    if (done) {
      ipc_cache().release(mapping_);
      mapping_ = nullptr;
    }
    return done;
  }

  memory::CopyTicket ticket;

 private:
  IpcMapping* mapping_;
};

}  // namespace

bool CudaIpcTransport::can_send(const Peer& peer) const {
  if (!peer.same_node) {
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return declining_peers_.count(peer.world_rank) == 0;
}

std::size_t CudaIpcTransport::rendezvous_from() const { return config().ipc_eager_limit; }

bool CudaIpcTransport::describe(const Source& source, const Message&, Blob* blob) {
  IpcExport exported;
  if (!ipc_driver().export_ipc(source.data, source.owner, &exported)) {
    return false;  // pool or VMM memory
  }
  std::memcpy(blob->bytes, &exported, sizeof(exported));
  return true;
}

void CudaIpcTransport::declined_by(int peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  declining_peers_.insert(peer);
}

std::unique_ptr<Transfer> CudaIpcTransport::accept(const Message& message, const Blob& blob, const Landing& landing,
                                                   Decline* decline, Status* error) {
  if (!message.peer.same_node) {
    decline->reason = "the sender is on another node";
    return nullptr;
  }
  const IpcExport exported = read_export(blob);
  // A host buffer takes the copy in the thread's current context.
  memory::PointerInfo destination = landing.owner;
  const bool to_device = landing.owner.kind == memory::MemoryKind::device;
  if (!to_device) {
    destination = memory::PointerInfo{};
    destination.context = memory::device_memory().current_context();
  }
  if (destination.context == nullptr) {
    return nullptr;  // no CUDA context on this thread: this message only
  }
  if (exported.offset + landing.delivered > exported.allocation_bytes) {
    decline->reason = "the envelope's buffer lies outside its allocation";
    return nullptr;
  }
  IpcMapping* mapping = nullptr;
  Status status = ipc_cache().acquire(message.peer.world_rank, message.peer.pid, exported, destination, &mapping);
  if (!status.is_ok()) {
    decline->reason = status.message();
    decline->for_peer = status.code() == StatusCode::unreachable;
    return nullptr;
  }
  auto copy = std::make_unique<IpcCopy>(mapping);
  // Queued: the pulls a progress sweep starts reach the GPU as one batch.
  // The source is a mapping of the sender's device memory.
  memory::copy_engine().queue_copy(landing.bytes, static_cast<const char*>(mapping->base) + exported.offset,
                                   landing.delivered, destination.context, to_device, &copy->ticket);
  note_shared_gpu(message.peer.world_rank, exported, copy->ticket.context);
  *error = Status::ok();
  return copy;
}

void CudaIpcTransport::note_shared_gpu(int sender, const IpcExport& exported, void* context) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!noted_senders_.insert(sender).second) {
      return;
    }
  }
  if (ipc_driver().shares_gpu_without_mps(exported, context)) {
    CUMPI_LOG(info,
              "rank %d shares this GPU without MPS: each switch between the two processes' work costs the GPU "
              "a time slice (about 150 us on an H200), which bounds small-message latency; run "
              "nvidia-cuda-mps-control -d before the job to share one context",
              sender);
  }
}

void CudaIpcTransport::progress() { memory::copy_engine().flush_copies(); }

void CudaIpcTransport::shutdown() { ipc_cache().clear(); }

CudaIpcTransport& cuda_ipc_transport() {
  static CudaIpcTransport* transport = new CudaIpcTransport();  // lives until exit
  return *transport;
}

}  // namespace cumpi::transport
