#include "transport/ucx/ucx_transport.h"

#include <cstring>
#include <vector>

#include "memory/copy_engine.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "transport/staged/pipeline.h"
#include "transport/ucx/ucx_library.h"
#include "transport/ucx/ucx_worker.h"

namespace cumpi::transport {

namespace {

using ucx::failure;
using ucx::poll_request;
using ucx::ucp;
using ucx::Worker;

// The ucx transport's part of the envelope.
struct UcxBlob {
  std::uint64_t tag = 0;    // of the data's first UCX message (chunk 0)
  std::uint64_t chunk = 0;  // 0: one message, moved by UCX itself; else the pipeline's chunk size
};
static_assert(sizeof(UcxBlob) <= kBlobBytes, "the ucx blob must fit the envelope");

constexpr ucp_tag_t kEveryBit = ~ucp_tag_t{0};
// A go-ahead holds the receiver's worker address: this many bytes at most.
constexpr std::size_t kMostAddressBytes = 16384;
// Cancelling a transfer given up (a peer that declined, a failed call) waits
// this long at most for UCX to let go of the buffer.
constexpr double kCancelSeconds = 2.0;

// A data message's tag: its sender's world rank, the message's id (unique
// per sender, modulo 2^28 messages in flight) and the chunk's index.
constexpr unsigned kChunkBits = 16;
constexpr unsigned kIdBits = 28;
constexpr std::size_t kMostChunks = std::size_t{1} << kChunkBits;
ucp_tag_t tag_of(int sender, std::uint64_t id) {
  return (static_cast<ucp_tag_t>(sender) << (kIdBits + kChunkBits)) |
         ((id & ((ucp_tag_t{1} << kIdBits) - 1)) << kChunkBits);
}

int this_world_rank() {
  int rank = 0;
  real_mpi().Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Device memory of a real GPU (the emulation backend's is host memory that
// only its copy engine may touch).
bool on_device(const memory::PointerInfo& owner) { return owner.kind != memory::MemoryKind::host; }

ucp_request_param_t params_for(const memory::PointerInfo& owner) {
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  params.memory_type = on_device(owner) ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
  return params;
}

// Whether this UCX moves memory of `owner` itself: host memory always,
// device memory where UCX handles CUDA (never the emulation's).
bool moves(const Worker& worker, const memory::PointerInfo& owner) {
  return !on_device(owner) || (worker.handles_cuda() && memory::copy_engine().has_streams());
}

// Gives up a UCX request still in flight (the buffer stays untouched after).
void cancel(void** request) {
  if (*request == nullptr || UCS_PTR_IS_ERR(*request)) {
    *request = nullptr;
    return;
  }
  if (Worker* worker = Worker::existing(); worker != nullptr) {
    ucp().ucp_request_cancel(worker->handle(), *request);
  }
  const double deadline = stats::now_seconds() + kCancelSeconds;
  while (poll_request(request) == UCS_INPROGRESS && stats::now_seconds() < deadline) {
  }
}

void cancel(MPI_Request* request) {
  if (*request != MPI_REQUEST_NULL) {
    real_mpi().Cancel(request);
    real_mpi().Wait(request, MPI_STATUS_IGNORE);
  }
}

// Whether a UCX request completed; false with an error that ended it.
bool completed(void** request, const char* call, Status* error) {
  const ucs_status_t status = poll_request(request);
  if (status == UCS_INPROGRESS) {
    return false;
  }
  if (status != UCS_OK) {
    *error = failure(call, status);
    return false;
  }
  return true;
}

Status posted(void** request, const char* call) {
  if (UCS_PTR_IS_ERR(*request)) {
    const ucs_status_t status = UCS_PTR_STATUS(*request);
    *request = nullptr;
    return failure(call, status);
  }
  return Status::ok();
}

// Pipeline chunks as UCX messages, chunk i with tag `tag` + i: sent on an
// endpoint, received on the worker.
class UcxChunkWire final : public ChunkWire {
 public:
  UcxChunkWire(ucp_ep_h endpoint, ucp_worker_h worker, ucp_tag_t tag)
      : endpoint_(endpoint), worker_(worker), tag_(tag) {}
  Status send(PipelineSlot& slot, const char* data, std::size_t bytes) override {
    const ucp_request_param_t params = params_for(memory::kHostMemory);
    slot.handle = ucp().ucp_tag_send_nbx(endpoint_, data, bytes, tag_ + slot.chunk, &params);
    return posted(&slot.handle, "ucp_tag_send_nbx");
  }
  Status receive(PipelineSlot& slot, char* into, std::size_t bytes) override {
    const ucp_request_param_t params = params_for(memory::kHostMemory);
    slot.handle = ucp().ucp_tag_recv_nbx(worker_, into, bytes, tag_ + slot.chunk, kEveryBit, &params);
    return posted(&slot.handle, "ucp_tag_recv_nbx");
  }
  bool done(PipelineSlot& slot, Status* error) override { return completed(&slot.handle, "a pipeline chunk", error); }
  void cancel(PipelineSlot& slot) override { transport::cancel(&slot.handle); }

 private:
  ucp_ep_h endpoint_;
  ucp_worker_h worker_;
  ucp_tag_t tag_;
};

// The sender: waits for the go-ahead, then sends the data: one message, or
// the pipeline's chunks.
class Sending final : public Transfer {
 public:
  Sending(const Source& source, const Message& message, const UcxBlob& blob)
      : source_(source), message_(message), blob_(blob) {}
  ~Sending() override {
    pipeline_.reset();  // before its wire
    cancel(&go_ahead_request_);
    cancel(&send_);
  }
  Sending(const Sending&) = delete;
  Sending& operator=(const Sending&) = delete;

  Status post() {
    go_ahead_.resize(kMostAddressBytes);
    return from_mpi(real_mpi().Irecv(go_ahead_.data(), static_cast<int>(go_ahead_.size()), MPI_BYTE,
                                     message_.peer.world_rank, message_.tag, message_.comm, &go_ahead_request_));
  }

  bool advance(Status* error) override {
    if (go_ahead_request_ != MPI_REQUEST_NULL) {
      if (!go_ahead_came(error)) {
        return !error->is_ok();
      }
      *error = send();
      if (!error->is_ok()) {
        return true;
      }
    }
    const bool done = pipeline_ != nullptr ? pipeline_->advance(error) : completed(&send_, "ucp_tag_send_nbx", error);
    return done || !error->is_ok();
  }

 private:
  bool go_ahead_came(Status* error) {
    int flag = 0;
    MPI_Status status{};
    const int rc = real_mpi().Test(&go_ahead_request_, &flag, &status);
    if (rc != MPI_SUCCESS) {
      *error = from_mpi(rc);
      return false;
    }
    if (flag != 0) {
      MPI_Count count = 0;
      real_mpi().Get_elements_x(&status, MPI_BYTE, &count);
      go_ahead_.resize(static_cast<std::size_t>(count));
    }
    return flag != 0;
  }

  Status send() {
    std::string why_not;
    Worker* worker = Worker::get(&why_not);
    if (worker == nullptr) {
      return Status::error(StatusCode::ucx_error, "the ucx transport was chosen, but " + why_not);
    }
    ucp_ep_h endpoint = nullptr;
    Status status = worker->endpoint(message_.peer.world_rank, go_ahead_.data(), go_ahead_.size(), &endpoint);
    if (!status.is_ok()) {
      return status;
    }
    if (blob_.chunk != 0) {
      wire_ = std::make_unique<UcxChunkWire>(endpoint, worker->handle(), blob_.tag);
      pipeline_ = std::make_unique<PipelineSender>();
      const PipelineShape shape{message_.bytes, static_cast<std::size_t>(blob_.chunk), configured_depth()};
      return pipeline_->start(source_.data, source_.owner, shape, wire_.get());
    }
    const ucp_request_param_t params = params_for(source_.owner);
    send_ = ucp().ucp_tag_send_nbx(endpoint, source_.data, message_.bytes, blob_.tag, &params);
    return posted(&send_, "ucp_tag_send_nbx");
  }

  Source source_;
  Message message_;
  UcxBlob blob_;
  std::vector<unsigned char> go_ahead_;
  MPI_Request go_ahead_request_ = MPI_REQUEST_NULL;
  void* send_ = nullptr;
  std::unique_ptr<UcxChunkWire> wire_;
  std::unique_ptr<PipelineSender> pipeline_;
};

// The receiver: the data's receive (or the pipeline's) posted, the go-ahead sent.
class Receiving final : public Transfer {
 public:
  Receiving() = default;
  ~Receiving() override {
    pipeline_.reset();  // before its wire
    cancel(&receive_);
    cancel(&go_ahead_request_);
  }
  Receiving(const Receiving&) = delete;
  Receiving& operator=(const Receiving&) = delete;

  Status start(Worker* worker, const Message& message, const Landing& landing, const UcxBlob& blob) {
    Status status;
    if (blob.chunk != 0) {
      wire_ = std::make_unique<UcxChunkWire>(nullptr, worker->handle(), blob.tag);
      pipeline_ = std::make_unique<PipelineReceiver>();
      const PipelineShape shape{message.bytes, static_cast<std::size_t>(blob.chunk), configured_depth()};
      status = pipeline_->start(landing.bytes, landing.owner, shape, landing.delivered, wire_.get());
    } else {
      const ucp_request_param_t params = params_for(landing.owner);
      receive_ =
          ucp().ucp_tag_recv_nbx(worker->handle(), landing.bytes, landing.delivered, blob.tag, kEveryBit, &params);
      status = posted(&receive_, "ucp_tag_recv_nbx");
    }
    if (!status.is_ok()) {
      return status;
    }
    go_ahead_ = worker->address();
    return from_mpi(real_mpi().Isend(go_ahead_.data(), static_cast<int>(go_ahead_.size()), MPI_BYTE,
                                     message.peer.world_rank, message.tag, message.comm, &go_ahead_request_));
  }

  bool advance(Status* error) override {
    if (go_ahead_request_ != MPI_REQUEST_NULL) {
      int flag = 0;
      const int rc = real_mpi().Test(&go_ahead_request_, &flag, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        *error = from_mpi(rc);
        return true;
      }
    }
    const bool done =
        pipeline_ != nullptr ? pipeline_->advance(error) : completed(&receive_, "ucp_tag_recv_nbx", error);
    return (done && go_ahead_request_ == MPI_REQUEST_NULL) || !error->is_ok();
  }

 private:
  void* receive_ = nullptr;
  std::vector<unsigned char> go_ahead_;
  MPI_Request go_ahead_request_ = MPI_REQUEST_NULL;
  std::unique_ptr<UcxChunkWire> wire_;
  std::unique_ptr<PipelineReceiver> pipeline_;
};

}  // namespace

bool UcxTransport::can_send(const Peer&) const {
  std::string why_not;
  return ucx::library(&why_not) != nullptr && (Worker::existing() != nullptr || !Worker::failed());
}

std::size_t UcxTransport::rendezvous_from() const { return config().eager_limit; }

bool UcxTransport::describe(const Source& source, const Message& message, Blob* blob) {
  std::string why_not;
  Worker* worker = Worker::get(&why_not);
  if (worker == nullptr) {
    return false;
  }
  UcxBlob ucx_blob{tag_of(this_world_rank(), message.id), 0};
  if (!moves(*worker, source.owner)) {
    ucx_blob.chunk = configured_chunk();
    if ((message.bytes + ucx_blob.chunk - 1) / ucx_blob.chunk > kMostChunks) {
      return false;  // more chunks than a tag counts: the staged transport takes it
    }
  }
  std::memcpy(blob->bytes, &ucx_blob, sizeof(ucx_blob));
  return true;
}

std::unique_ptr<Transfer> UcxTransport::start_send(const Source& source, const Message& message, const Blob& blob,
                                                   Status* error) {
  UcxBlob ucx_blob;
  std::memcpy(&ucx_blob, blob.bytes, sizeof(ucx_blob));
  auto transfer = std::make_unique<Sending>(source, message, ucx_blob);
  *error = transfer->post();
  return transfer;
}

std::unique_ptr<Transfer> UcxTransport::accept(const Message& message, const Blob& blob, const Landing& landing,
                                               Decline* decline, Status* error) {
  std::string why_not;
  Worker* worker = Worker::get(&why_not);
  if (worker == nullptr) {
    decline->reason = "UCX cannot be had here: " + why_not;
    decline->for_peer = true;
    return nullptr;
  }
  if (landing.delivered < message.bytes) {
    return nullptr;  // truncated: the staged pull delivers what fits, as MPI would
  }
  UcxBlob ucx_blob;
  std::memcpy(&ucx_blob, blob.bytes, sizeof(ucx_blob));
  if (ucx_blob.chunk == 0 && !moves(*worker, landing.owner)) {
    decline->reason = "the sender's UCX moves CUDA memory, this rank's does not";
    decline->for_peer = true;
    return nullptr;
  }
  auto transfer = std::make_unique<Receiving>();
  *error = transfer->start(worker, message, landing, ucx_blob);
  if (!error->is_ok()) {
    return nullptr;
  }
  return transfer;
}

void UcxTransport::progress() {
  if (Worker* worker = Worker::existing(); worker != nullptr) {
    worker->progress();
  }
}

void UcxTransport::shutdown() {
  if (Worker* worker = Worker::existing(); worker != nullptr) {
    worker->shutdown();
    delete worker;
  }
}

UcxTransport& ucx_transport() {
  static UcxTransport* transport = new UcxTransport();  // lives until exit
  return *transport;
}

}  // namespace cumpi::transport
