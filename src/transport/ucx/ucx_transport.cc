#include "transport/ucx/ucx_transport.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "memory/copy_engine.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
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
  // 1: the sender has no endpoint to the receiver yet. This first message
  // goes in pinned chunks over the private channel (as the staged
  // transport's), and the receiver sends back its worker address.
  std::uint64_t handshake = 0;
};
static_assert(sizeof(UcxBlob) <= kBlobBytes, "the ucx blob must fit the envelope");

constexpr ucp_tag_t kEveryBit = ~ucp_tag_t{0};
// A receiver's worker address, sent back on a handshake: this many bytes
// at most (empty: UCX cannot be had there).
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

// Peers whose UCX cannot be had (they answered a handshake with no
// address): the ucx transport does not offer itself to them again.
std::vector<int>& peers_without_ucx() {
  static auto* peers = new std::vector<int>();  // lives until exit
  return *peers;
}

bool has_no_ucx(int peer) {
  const std::vector<int>& peers = peers_without_ucx();
  return std::find(peers.begin(), peers.end(), peer) != peers.end();
}

// The sender. Everything goes at once, before any reply, so that from then
// on UCX and MPI alone move the data and the sender may go into any MPI call
// that is not cumpi's (a barrier): with an endpoint to the receiver, one UCX
// message or the pipeline's chunks all staged and posted; on the first
// message to a peer (a handshake), the chunks over the private channel, and
// a receive for the address the receiver sends back.
class Sending final : public Transfer {
 public:
  Sending(const Source& source, const Message& message, const UcxBlob& blob)
      : source_(source), message_(message), blob_(blob) {}
  ~Sending() override {
    std::lock_guard<std::recursive_mutex> held(ucx::lock());
    pipeline_.reset();  // before its wire
    cancel(&address_request_);
    cancel(&send_);
  }
  Sending(const Sending&) = delete;
  Sending& operator=(const Sending&) = delete;

  Status start() {
    std::lock_guard<std::recursive_mutex> held(ucx::lock());
    if (blob_.handshake != 0) {
      return start_handshake();
    }
    std::string why_not;
    Worker* worker = Worker::get(&why_not);
    ucp_ep_h endpoint = worker != nullptr ? worker->known_endpoint(message_.peer.world_rank) : nullptr;
    if (endpoint == nullptr) {
      return Status::error(StatusCode::internal, "no UCX endpoint to rank " + std::to_string(message_.peer.world_rank));
    }
    if (blob_.chunk != 0) {
      wire_ = std::make_unique<UcxChunkWire>(endpoint, worker->handle(), blob_.tag);
      return push_chunks();
    }
    if (on_device(source_.owner)) {
      worker->use_context(source_.owner.context);
    }
    const ucp_request_param_t params = params_for(source_.owner);
    send_ = ucp().ucp_tag_send_nbx(endpoint, source_.data, message_.bytes, blob_.tag, &params);
    return posted(&send_, "ucp_tag_send_nbx");
  }

  bool advance(Status* error) override {
    std::lock_guard<std::recursive_mutex> held(ucx::lock());
    if (address_request_ != MPI_REQUEST_NULL && address_came(error)) {
      *error = take_address();
    }
    if (!error->is_ok()) {
      return true;
    }
    const bool sent = pipeline_ != nullptr ? pipeline_->advance(error) : completed(&send_, "ucp_tag_send_nbx", error);
    return (sent && address_request_ == MPI_REQUEST_NULL) || !error->is_ok();
  }

 private:
  Status start_handshake() {
    address_.resize(kMostAddressBytes);
    Status status =
        from_mpi(real_mpi().Irecv(address_.data(), static_cast<int>(address_.size()), MPI_BYTE,
                                  message_.peer.world_rank, message_.back_tag, message_.comm, &address_request_));
    if (status.is_ok()) {
      wire_ = std::make_unique<MpiChunkWire>(message_.comm, message_.peer.world_rank, message_.tag);
      status = push_chunks();
    }
    return status;
  }

  // Every chunk staged and posted now (as the staged transport does).
  Status push_chunks() {
    pipeline_ = std::make_unique<PipelineSender>();
    PipelineShape shape{message_.bytes, static_cast<std::size_t>(blob_.chunk), 1};
    shape.depth = static_cast<int>(shape.chunks());
    Status status = pipeline_->start(source_.data, source_.owner, shape, wire_.get());
    if (status.is_ok()) {
      status = pipeline_->push_all();
    }
    return status;
  }

  bool address_came(Status* error) {
    int flag = 0;
    MPI_Status status{};
    const int rc = real_mpi().Test(&address_request_, &flag, &status);
    if (rc != MPI_SUCCESS) {
      *error = from_mpi(rc);
      return false;
    }
    if (flag != 0) {
      MPI_Count count = 0;
      real_mpi().Get_elements_x(&status, MPI_BYTE, &count);
      address_.resize(static_cast<std::size_t>(count));
    }
    return flag != 0;
  }

  // The receiver's address: an endpoint for its later messages, or (none
  // came) the peer marked as one without UCX.
  Status take_address() {
    const int peer = message_.peer.world_rank;
    if (address_.empty()) {
      if (!has_no_ucx(peer)) {
        peers_without_ucx().push_back(peer);
      }
      return Status::ok();
    }
    std::string why_not;
    Worker* worker = Worker::get(&why_not);
    if (worker == nullptr) {
      return Status::error(StatusCode::ucx_error, "the ucx transport was chosen, but " + why_not);
    }
    ucp_ep_h endpoint = nullptr;
    return worker->endpoint(peer, message_.peer.same_node, address_.data(), address_.size(), &endpoint);
  }

  Source source_;
  Message message_;
  UcxBlob blob_;
  std::vector<unsigned char> address_;
  MPI_Request address_request_ = MPI_REQUEST_NULL;
  void* send_ = nullptr;
  std::unique_ptr<ChunkWire> wire_;
  std::unique_ptr<PipelineSender> pipeline_;
};

// The receiver: the data's receive (or the pipeline's) posted, and this
// rank's worker address sent back on a handshake. One message that cannot
// land in place (a truncated receive, or memory this UCX cannot touch)
// lands in host memory first and is copied from there. Data that has not
// all come within CUMPI_UCX_TIMEOUT of the accept (it was sent before the
// envelope) fails the receive: the sender or the fabric is gone.
class Receiving final : public Transfer {
 public:
  Receiving() = default;
  ~Receiving() override {
    std::lock_guard<std::recursive_mutex> held(ucx::lock());
    pipeline_.reset();  // before its wire
    cancel(&receive_);
    cancel(&address_request_);
    if (copy_.event != nullptr) {
      Status ignored = memory::copy_engine().wait_copy(&copy_);
      (void)ignored;
    }
  }
  Receiving(const Receiving&) = delete;
  Receiving& operator=(const Receiving&) = delete;

  Status start(Worker* worker, const Message& message, const Landing& landing, const UcxBlob& blob) {
    std::lock_guard<std::recursive_mutex> held(ucx::lock());
    landing_ = landing;
    peer_ = message.peer.world_rank;
    deadline_ = stats::now_seconds() + static_cast<double>(config().ucx_timeout);
    Status status;
    if (blob.handshake != 0) {
      status = start_handshake(worker, message, landing, blob);
    } else if (blob.chunk != 0) {
      wire_ = std::make_unique<UcxChunkWire>(nullptr, worker->handle(), blob.tag);
      status = start_pipeline(message, landing, blob);
    } else if (landing.delivered < message.bytes || !moves(*worker, landing.owner)) {
      bounce_.resize(message.bytes);
      const ucp_request_param_t params = params_for(memory::kHostMemory);
      receive_ = ucp().ucp_tag_recv_nbx(worker->handle(), bounce_.data(), bounce_.size(), blob.tag, kEveryBit, &params);
      status = posted(&receive_, "ucp_tag_recv_nbx");
    } else {
      if (on_device(landing.owner)) {
        worker->use_context(landing.owner.context);
      }
      const ucp_request_param_t params = params_for(landing.owner);
      receive_ =
          ucp().ucp_tag_recv_nbx(worker->handle(), landing.bytes, landing.delivered, blob.tag, kEveryBit, &params);
      status = posted(&receive_, "ucp_tag_recv_nbx");
    }
    return status;
  }

  bool advance(Status* error) override {
    std::lock_guard<std::recursive_mutex> held(ucx::lock());
    if (address_request_ != MPI_REQUEST_NULL) {
      int flag = 0;
      const int rc = real_mpi().Test(&address_request_, &flag, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        *error = from_mpi(rc);
        return true;
      }
    }
    const bool done = pipeline_ != nullptr ? pipeline_->advance(error) : received(error);
    if (!done && error->is_ok() && stats::now_seconds() > deadline_) {
      *error = Status::error(StatusCode::ucx_error, "the data of a message from rank " + std::to_string(peer_) +
                                                        " did not come within CUMPI_UCX_TIMEOUT (" +
                                                        std::to_string(config().ucx_timeout) + " s)");
    }
    return (done && address_request_ == MPI_REQUEST_NULL) || !error->is_ok();
  }

 private:
  // The chunks come over the private channel; this rank's address goes
  // back (empty where UCX cannot be had here).
  Status start_handshake(Worker* worker, const Message& message, const Landing& landing, const UcxBlob& blob) {
    wire_ = std::make_unique<MpiChunkWire>(message.comm, peer_, message.tag);
    Status status = start_pipeline(message, landing, blob);
    if (!status.is_ok()) {
      return status;
    }
    if (worker != nullptr) {
      address_ = worker->address();
    }
    return from_mpi(real_mpi().Isend(address_.data(), static_cast<int>(address_.size()), MPI_BYTE, peer_,
                                     message.back_tag, message.comm, &address_request_));
  }

  Status start_pipeline(const Message& message, const Landing& landing, const UcxBlob& blob) {
    pipeline_ = std::make_unique<PipelineReceiver>();
    const PipelineShape shape{message.bytes, static_cast<std::size_t>(blob.chunk), configured_depth()};
    return pipeline_->start(landing.bytes, landing.owner, shape, landing.delivered, wire_.get());
  }

  // One message: in place, or in host memory and then copied.
  bool received(Status* error) {
    if (!bounced_) {
      if (!completed(&receive_, "ucp_tag_recv_nbx", error)) {
        return false;
      }
      if (bounce_.empty()) {
        return true;
      }
      bounced_ = true;
      if (landing_.owner.kind == memory::MemoryKind::host) {
        std::memcpy(landing_.bytes, bounce_.data(), landing_.delivered);
        return true;
      }
      *error = memory::copy_engine().start_copy(landing_.bytes, bounce_.data(), landing_.delivered,
                                                landing_.owner.context, &copy_);
      if (!error->is_ok()) {
        return false;
      }
    }
    bool finished = false;
    Status status = memory::copy_engine().poll_copy(&copy_, &finished);
    if (!status.is_ok()) {
      *error = std::move(status);
      return false;
    }
    return finished;
  }

  Landing landing_;
  int peer_ = -1;
  double deadline_ = 0.0;
  void* receive_ = nullptr;
  std::vector<char> bounce_;
  bool bounced_ = false;
  memory::CopyTicket copy_;
  std::vector<unsigned char> address_;
  MPI_Request address_request_ = MPI_REQUEST_NULL;
  std::unique_ptr<ChunkWire> wire_;
  std::unique_ptr<PipelineReceiver> pipeline_;
};

}  // namespace

bool UcxTransport::can_send(const Peer& peer) const {
  if (peer.same_node && !takes_this_node_) {
    return false;
  }
  std::string why_not;
  return ucx::library(&why_not) != nullptr && (Worker::existing() != nullptr || !Worker::failed()) &&
         !has_no_ucx(peer.world_rank);
}

// This node's ranks take ucx only where it comes before cuda_ipc: by
// default CUDA IPC, then the staged pipeline, serve them.
void UcxTransport::configured(const std::vector<std::string>& order) {
  const auto ucx = std::find(order.begin(), order.end(), name());
  const auto ipc = std::find(order.begin(), order.end(), "cuda_ipc");
  takes_this_node_ = ucx < ipc;
}

std::size_t UcxTransport::rendezvous_from() const { return config().eager_limit; }

bool UcxTransport::describe(const Source& source, const Message& message, Blob* blob) {
  std::lock_guard<std::recursive_mutex> held(ucx::lock());
  std::string why_not;
  Worker* worker = Worker::get(&why_not);
  if (worker == nullptr) {
    return false;
  }
  UcxBlob ucx_blob{tag_of(runtime::world_rank(), message.id), 0, 0};
  ucx_blob.handshake = worker->known_endpoint(message.peer.world_rank) == nullptr ? 1 : 0;
  if (ucx_blob.handshake != 0 || !moves(*worker, source.owner)) {
    ucx_blob.chunk = configured_chunk();
  }
  if (ucx_blob.handshake == 0 && ucx_blob.chunk != 0 &&
      (message.bytes + ucx_blob.chunk - 1) / ucx_blob.chunk > kMostChunks) {
    return false;  // more chunks than a tag counts: the staged transport takes it
  }
  std::memcpy(blob->bytes, &ucx_blob, sizeof(ucx_blob));
  return true;
}

const char* UcxTransport::route_note(const Source& source) const {
  const Worker* worker = Worker::existing();
  if (worker == nullptr) {
    return "";
  }
  return moves(*worker, source.owner) ? "device memory moved by UCX itself"
                                      : "in pinned chunks over UCX (this UCX does not move device memory)";
}

std::unique_ptr<Transfer> UcxTransport::start_send(const Source& source, const Message& message, const Blob& blob,
                                                   Status* error) {
  UcxBlob ucx_blob;
  std::memcpy(&ucx_blob, blob.bytes, sizeof(ucx_blob));
  auto transfer = std::make_unique<Sending>(source, message, ucx_blob);
  *error = transfer->start();
  return transfer;
}

// The data was sent before the envelope, so it is taken whatever the
// receive: the pipeline and the bounce buffer drop what a truncated receive
// has no room for, as MPI would.
std::unique_ptr<Transfer> UcxTransport::accept(const Message& message, const Blob& blob, const Landing& landing,
                                               Decline*, Status* error) {
  std::lock_guard<std::recursive_mutex> held(ucx::lock());
  UcxBlob ucx_blob;
  std::memcpy(&ucx_blob, blob.bytes, sizeof(ucx_blob));
  std::string why_not;
  Worker* worker = Worker::get(&why_not);
  if (worker == nullptr && ucx_blob.handshake == 0) {
    *error = Status::error(StatusCode::ucx_error, "a UCX message came, but " + why_not);
    return nullptr;
  }
  if (worker == nullptr) {
    CUMPI_LOG(info, "rank %d offers ucx; UCX cannot be had here (%s): its messages take staged",
              message.peer.world_rank, why_not.c_str());
  }
  auto transfer = std::make_unique<Receiving>();
  *error = transfer->start(worker, message, landing, ucx_blob);
  if (!error->is_ok()) {
    return nullptr;
  }
  return transfer;
}

void UcxTransport::progress() {
  std::lock_guard<std::recursive_mutex> held(ucx::lock());
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
