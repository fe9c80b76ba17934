#include "transport/staged/staged_transport.h"

#include <cstring>

#include "runtime/config.h"

namespace cumpi::transport {

namespace {

// The staged transport's part of the envelope: the sender pushes chunks of
// this size.
struct StagedBlob {
  std::uint64_t chunk = 0;
};
static_assert(sizeof(StagedBlob) <= kBlobBytes, "the staged blob must fit the envelope");

StagedBlob read_blob(const Blob& blob) {
  StagedBlob staged;
  std::memcpy(&staged, blob.bytes, sizeof(staged));
  return staged;
}

// Each holds its wire before its pipeline, which it outlives.
class SendingPipeline final : public Transfer {
 public:
  explicit SendingPipeline(const Message& message) : wire(message.comm, message.peer.world_rank, message.tag) {}
  bool advance(Status* error) override { return pipeline.advance(error) || !error->is_ok(); }
  MpiChunkWire wire;
  PipelineSender pipeline;
};

class ReceivingPipeline final : public Transfer {
 public:
  explicit ReceivingPipeline(const Message& message) : wire(message.comm, message.peer.world_rank, message.tag) {}
  bool advance(Status* error) override { return pipeline.advance(error) || !error->is_ok(); }
  MpiChunkWire wire;
  PipelineReceiver pipeline;
};

std::unique_ptr<SendingPipeline> send(const Source& source, const Message& message, const PipelineShape& shape,
                                      Status* error) {
  auto transfer = std::make_unique<SendingPipeline>(message);
  *error = transfer->pipeline.start(source.data, source.owner, shape, &transfer->wire);
  return transfer;
}

std::unique_ptr<Transfer> receive(const Message& message, const Landing& landing, const PipelineShape& shape,
                                  Status* error) {
  auto transfer = std::make_unique<ReceivingPipeline>(message);
  *error = transfer->pipeline.start(landing.bytes, landing.owner, shape, landing.delivered, &transfer->wire);
  return transfer;
}

}  // namespace

std::size_t StagedTransport::rendezvous_from() const { return config().eager_limit; }

bool StagedTransport::describe(const Source&, const Message&, Blob* blob) {
  const StagedBlob staged{configured_chunk()};
  std::memcpy(blob->bytes, &staged, sizeof(staged));
  return true;
}

// Stages the whole message and posts every chunk before returning: the
// sender may go into any blocking call now (a collective, say) and MPI
// alone delivers the rest.
std::unique_ptr<Transfer> StagedTransport::start_send(const Source& source, const Message& message, const Blob& blob,
                                                      Status* error) {
  const auto chunk = static_cast<std::size_t>(read_blob(blob).chunk);
  const PipelineShape shape{message.bytes, chunk, static_cast<int>((message.bytes + chunk - 1) / chunk)};
  auto transfer = send(source, message, shape, error);
  if (error->is_ok()) {
    *error = transfer->pipeline.push_all();
  }
  return transfer;
}

// Every pushed chunk comes; what does not fit a truncated receive is dropped.
std::unique_ptr<Transfer> StagedTransport::accept(const Message& message, const Blob& blob, const Landing& landing,
                                                  Decline*, Status* error) {
  const PipelineShape shape{message.bytes, static_cast<std::size_t>(read_blob(blob).chunk), configured_depth()};
  return receive(message, landing, shape, error);
}

std::unique_ptr<Transfer> StagedTransport::start_pull_receive(const Message& message, const Landing& landing,
                                                              const PipelineShape& shape, Status* error) {
  return receive(message, landing, shape, error);
}

std::unique_ptr<Transfer> StagedTransport::serve_pull(const Source& source, const Message& message,
                                                      const PipelineShape& shape, Status* error) {
  return send(source, message, shape, error);
}

StagedTransport& staged_transport() {
  static StagedTransport* transport = new StagedTransport();  // lives until exit
  return *transport;
}

}  // namespace cumpi::transport
