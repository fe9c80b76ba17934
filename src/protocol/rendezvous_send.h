// The sender's side of a rendezvous message (DESIGN §3): the first
// registered transport that can carry the buffer describes it in an
// envelope, which goes on the user's (comm, tag, dest) in place of the data
// (a transport that pushes starts at once); then, on the private channel,
// either FIN (the receiver took the data) or a pull request (it declined the
// transport), which the sender serves by feeding the staged pipeline, and
// FIN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory/device_memory.h"
#include "protocol/envelope.h"
#include "protocol/operations.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"
#include "transport/transport.h"

namespace cumpi::protocol {

class RendezvousSend {
 public:
  RendezvousSend() = default;
  ~RendezvousSend();
  RendezvousSend(const RendezvousSend&) = delete;
  RendezvousSend& operator=(const RendezvousSend&) = delete;

  // `data` is the message's first byte in device memory of `owner`;
  // `peer` is dest's world rank. `short_slot` is a slot claimed towards
  // `peer` for a message smaller than an envelope (the send keeps it until
  // it ends), or kNoShortSlot.
  static constexpr std::int64_t kNoShortSlot = -1;
  Status start(const char* data, std::size_t bytes, const memory::PointerInfo& owner, int dest, int peer, int tag,
               MPI_Comm comm, std::int64_t short_slot = kNoShortSlot);
  // Never blocks; true once FIN arrived (or an error ended the send).
  bool advance(Status* error);

 private:
  Status post_reply_receive();
  void serve_pull(int receiver, Status* error);
  // The envelope on the channel, then the token in the data's place.
  Status send_short(int dest, int tag, MPI_Comm comm);

  transport::Source source_;
  Envelope envelope_;
  EnvelopeRecord record_;
  MPI_Request envelope_request_ = MPI_REQUEST_NULL;  // the envelope, or a short envelope's token
  MPI_Request short_envelope_request_ = MPI_REQUEST_NULL;
  int peer_ = -1;
  std::int64_t short_slot_ = kNoShortSlot;
  unsigned char token_[kEnvelopeBytes] = {};
  MPI_Request reply_request_ = MPI_REQUEST_NULL;
  Reply reply_;
  transport::Transport* chosen_ = nullptr;  // the one that described the data
  transport::Transport* moving_ = nullptr;  // the one whose transfer runs here (a push, a served pull)
  std::unique_ptr<transport::Transfer> transfer_;
  bool transfer_done_ = false;
  bool fin_ = false;
  double started_ = 0;
};

// False when a device message of `bytes` in a contiguous buffer goes
// eagerly to any peer (a cheap test before the peer is known).
bool may_go_by_rendezvous(std::size_t bytes);
// True when it goes by rendezvous to world rank `peer` rather than eagerly:
// the limit of the transport likely to carry it decides
// (CUMPI_IPC_EAGER_LIMIT for CUDA IPC, CUMPI_EAGER_LIMIT for the staged
// pipeline); smaller than an envelope, it goes by short envelope where that
// transport carries short messages and the peer takes them.
bool goes_by_rendezvous(std::size_t bytes, int peer);

// A rendezvous send behind a generalized request (MPI_Isend and friends).
class RendezvousSendOperation final : public Operation {
 public:
  RendezvousSend send;
  bool advance() override;
  Service service() const override { return Service::always; }
};

}  // namespace cumpi::protocol
