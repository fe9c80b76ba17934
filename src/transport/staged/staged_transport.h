// The staged transport: a message's data through pinned host memory, in
// chunks over the private channel (pipeline.h). Always correct, between any
// two ranks and any two kinds of memory, so it is always registered, last
// when nothing else is asked for.
//
// Two ways to start. Offered by the sender (it is the first transport that
// can carry the buffer), the sender pushes every chunk at once and MPI alone
// delivers them: the sender then needs no service from its own progress,
// whatever blocking call it enters next. Where the receiver declined
// another transport's offer, the receiver asks for the data (a pull) and
// the sender feeds the pipeline on request.
#pragma once

#include <cstddef>
#include <memory>

#include "transport/staged/pipeline.h"
#include "transport/transport.h"

namespace cumpi::transport {

class StagedTransport final : public Transport {
 public:
  const char* name() const override { return "staged"; }
  TransportId id() const override { return TransportId::staged; }
  stats::Route route() const override { return stats::Route::pipeline; }

  bool can_send(const Peer&) const override { return true; }
  std::size_t rendezvous_from() const override;
  bool carries_short_messages() const override { return false; }
  bool describe(const Source& source, const Message& message, Blob* blob) override;
  std::unique_ptr<Transfer> start_send(const Source& source, const Message& message, const Blob& blob,
                                       Status* error) override;

  // Takes every message offered by its sender.
  std::unique_ptr<Transfer> accept(const Message& message, const Blob& blob, const Landing& landing, Decline* decline,
                                   Status* error) override;

  // A pull: the receiver's side, once it asked for `shape` (bytes, chunk,
  // depth), and the sender's, serving that request.
  std::unique_ptr<Transfer> start_pull_receive(const Message& message, const Landing& landing,
                                               const PipelineShape& shape, Status* error);
  std::unique_ptr<Transfer> serve_pull(const Source& source, const Message& message, const PipelineShape& shape,
                                       Status* error);
};

StagedTransport& staged_transport();

}  // namespace cumpi::transport
