// The ucx transport: a rendezvous message's data moved by UCX's tag
// matching, between nodes where UCX has a fabric (InfiniBand, RoCE, TCP),
// straight from and to device memory where this UCX handles CUDA memory
// (GPUDirect RDMA or UCX's own pipeline), else in pinned chunks of the
// staged pipeline, each a UCX message.
//
// The sender sends everything at once, before the envelope goes: from then
// on UCX (served by the worker's progress thread) and MPI move the data
// without the sender's engine, as MPI's progress rule needs of a sender
// that goes into a barrier. A UCX message's tag names the sender and the
// message; the receiver, accepting the envelope, posts ucp_tag_recv_nbx for
// it (UCX holds what came before). The first message to a peer is the
// handshake: its chunks go over the private channel, and the receiver sends
// its worker address back, from which the sender makes its endpoint to
// that peer. FIN ends the message as for every transport.
//
// By default (CUMPI_TRANSPORTS=cuda_ipc,ucx,staged) ucx carries messages to
// ranks on other nodes; ranks on this node take it only where
// CUMPI_TRANSPORTS lists it before cuda_ipc, or without cuda_ipc.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace cumpi::transport {

class UcxTransport final : public Transport {
 public:
  const char* name() const override { return "ucx"; }
  TransportId id() const override { return TransportId::ucx; }
  stats::Route route() const override { return stats::Route::ucx; }

  // Wherever libucp.so.0 could be loaded and a worker made (this node's
  // peers as take_this_node() says), to peers that have UCX.
  bool can_send(const Peer& peer) const override;
  std::size_t rendezvous_from() const override;
  bool carries_short_messages() const override { return false; }
  bool describe(const Source& source, const Message& message, Blob* blob) override;
  std::unique_ptr<Transfer> start_send(const Source& source, const Message& message, const Blob& blob,
                                       Status* error) override;
  const char* route_note(const Source& source) const override;
  std::unique_ptr<Transfer> accept(const Message& message, const Blob& blob, const Landing& landing, Decline* decline,
                                   Status* error) override;
  void progress() override;
  void shutdown() override;
  // Ranks on this node take ucx too where it comes before cuda_ipc.
  void configured(const std::vector<std::string>& order) override;

 private:
  bool takes_this_node_ = false;
};

UcxTransport& ucx_transport();

}  // namespace cumpi::transport
