// The ucx transport: a rendezvous message's data moved by UCX's tag
// matching, between nodes where UCX has a fabric (InfiniBand, RoCE, TCP),
// straight from and to device memory where this UCX handles CUDA memory
// (GPUDirect RDMA or UCX's own pipeline), from and to host memory always.
//
// The receiver drives it: accepting the envelope, it posts
// ucp_tag_recv_nbx into the landing with a tag naming the sender and the
// message, then sends the sender a go-ahead on the message's private tag
// holding its worker address. The sender, waiting for that since the
// envelope left, makes its endpoint to the receiver on the first go-ahead
// from it and sends the data with ucp_tag_send_nbx; FIN ends the message as
// for every transport. A receiver that declines (a truncated receive, or
// device memory this UCX cannot touch) pulls through the staged pipeline
// instead, and the sender drops its wait.
#pragma once

#include <cstddef>
#include <memory>

#include "transport/transport.h"

namespace cumpi::transport {

class UcxTransport final : public Transport {
 public:
  const char* name() const override { return "ucx"; }
  TransportId id() const override { return TransportId::ucx; }
  stats::Route route() const override { return stats::Route::ucx; }

  // Wherever libucp.so.0 could be loaded and a worker made.
  bool can_send(const Peer& peer) const override;
  std::size_t rendezvous_from() const override;
  bool carries_short_messages() const override { return false; }
  bool describe(const Source& source, const Message& message, Blob* blob) override;
  std::unique_ptr<Transfer> start_send(const Source& source, const Message& message, const Blob& blob,
                                       Status* error) override;
  std::unique_ptr<Transfer> accept(const Message& message, const Blob& blob, const Landing& landing, Decline* decline,
                                   Status* error) override;
  void progress() override;
  void shutdown() override;
};

UcxTransport& ucx_transport();

}  // namespace cumpi::transport
