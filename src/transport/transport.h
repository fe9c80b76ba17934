// A transport moves one rendezvous message's data between two ranks, once
// the envelope found its receive (DESIGN §3, §4). It is a plain object, in
// the shape of NCCL's transports and UCX's uct components: a name and an id;
// on the sender, whether it can carry a buffer to a peer and what it puts in
// the envelope for it (an opaque blob of its own); on the receiver, whether
// it accepts that envelope into a receive's memory; a transfer on each side,
// advanced by the progress engine; its own progress and shutdown.
//
// The protocol above (envelope, FIN, truncation, matching) is the same for
// every transport; the registry (registry.h) holds the transports in the
// order CUMPI_TRANSPORTS gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memory/device_memory.h"
#include "runtime/mpi_api.h"
#include "runtime/stats.h"
#include "runtime/status.h"

namespace cumpi::transport {

// On the wire: the envelope names the transport that describes its data.
enum class TransportId : std::uint32_t { none = 0, cuda_ipc = 1, staged = 2, ucx = 3 };

// A transport's own part of the envelope.
constexpr std::size_t kBlobBytes = 160;
struct Blob {
  unsigned char bytes[kBlobBytes] = {};
};

// The rank at the other end.
struct Peer {
  int world_rank = -1;
  bool same_node = false;
  int pid = 0;  // the receiver learns the sender's from the envelope; 0 when not known
};

// One message, as both ends know it. Chunks and other traffic of its own go
// on `comm` (the private channel) with `tag` from sender to receiver and
// `back_tag` the other way, from or to the peer's world rank.
struct Message {
  std::uint64_t id = 0;
  std::size_t bytes = 0;  // the message's size
  Peer peer;
  MPI_Comm comm = MPI_COMM_NULL;
  int tag = 0;
  int back_tag = 0;
};

// The sender's data: contiguous bytes in device memory of `owner`.
struct Source {
  const char* data = nullptr;
  memory::PointerInfo owner;
};

// Where the receiver's data goes: `delivered` contiguous bytes at `bytes`
// (the rest of a larger message is dropped: a truncated receive), in device
// memory of `owner`, or in host memory when owner.kind is host.
struct Landing {
  char* bytes = nullptr;
  std::size_t delivered = 0;
  memory::PointerInfo owner;
};

// Why a transport declined a message; `for_peer` when it will decline every
// message of this peer (the sender then stops offering it).
struct Decline {
  std::string reason;  // empty: a decline of this message only, not worth a log line
  bool for_peer = false;
};

// One side of one message's data movement. Never blocks.
class Transfer {
 public:
  virtual ~Transfer() = default;
  // True once this side's part is done (or an error ended it).
  virtual bool advance(Status* error) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual TransportId id() const = 0;
  // Which statistics row its transfers count in.
  virtual stats::Route route() const = 0;

  // Sender. Whether it may carry device data to `peer` (cheap: asked before
  // a message is sized against the limits below).
  virtual bool can_send(const Peer& peer) const = 0;
  // The smallest contiguous device message that goes by rendezvous over it
  // rather than eagerly (the protocol keeps the envelope's size as a floor).
  virtual std::size_t rendezvous_from() const = 0;
  // Whether messages smaller than an envelope may go over it by short
  // envelope (worth it only where one copy replaces an eager message's two).
  virtual bool carries_short_messages() const = 0;
  // Fills the blob for `source`; false when it cannot carry this buffer
  // after all (memory that cannot be exported): the next transport is asked.
  virtual bool describe(const Source& source, const Message& message, Blob* blob) = 0;
  // What goes at once, before any reply (a push); null when the receiver
  // drives the transfer.
  virtual std::unique_ptr<Transfer> start_send(const Source& source, const Message& message, const Blob& blob,
                                               Status* error) = 0;
  // How it carries `source` (after describe), for the route log; "" when
  // the name says it all.
  virtual const char* route_note(const Source& source) const {
    (void)source;
    return "";
  }
  // The sender learns that `peer` declined this transport for good.
  virtual void declined_by(int peer) { (void)peer; }

  // Receiver. Takes the message that `blob` describes into `landing` and
  // starts the transfer, or declines it (null, with the reason). One call,
  // since accepting may take what the transfer then holds (a mapping of the
  // sender's memory). An error is returned through `error`, with null.
  virtual std::unique_ptr<Transfer> accept(const Message& message, const Blob& blob, const Landing& landing,
                                           Decline* decline, Status* error) = 0;

  // Registered in CUMPI_TRANSPORTS's `order` (every name listed, in order):
  // a transport whose part depends on its place there reads it.
  virtual void configured(const std::vector<std::string>& order) { (void)order; }

  // Advances what the transport does on its own (queued copies, a worker).
  virtual void progress() {}
  // At MPI_Finalize, after the last transfer.
  virtual void shutdown() {}
};

}  // namespace cumpi::transport
