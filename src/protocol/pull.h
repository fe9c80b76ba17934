// The receiver's side of a rendezvous message: once an envelope arrived, the
// transport the sender chose takes the data into the receive (CUDA IPC maps
// the sender's buffer; the staged transport receives the chunks the sender
// pushes); where this rank declines that transport, the data is pulled
// through the staged pipeline, which the sender feeds on request. FIN then
// tells the sender its send is complete. Truncation and the landing of
// data that cannot go straight into the receive buffer are the same for
// every transport.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "protocol/envelope.h"
#include "protocol/receive_target.h"
#include "runtime/status.h"
#include "transport/transport.h"

namespace cumpi::protocol {

class Pull {
 public:
  Pull() = default;
  Pull(const Pull&) = delete;
  Pull& operator=(const Pull&) = delete;

  // Starts taking `envelope`'s message into `target`, which must outlive
  // the pull. A message larger than the target's capacity is truncated.
  Status start(const Envelope& envelope, ReceiveTarget* target);
  // Never blocks; true once the data is in place and FIN was sent.
  bool advance(Status* error);

  std::size_t delivered() const { return delivered_; }
  bool truncated() const { return truncated_; }
  // The byte count the receive's status reports (truncated_count()).
  std::size_t reported_count() const;

 private:
  transport::Message message() const;
  transport::Landing landing();
  // Asks the sender to feed the staged pipeline; `for_peer`: every later
  // message of this sender would be declined too.
  Status start_staged_pull(bool for_peer);
  Status send_reply(const Reply& reply) const;
  void finish(Status* error);

  Envelope envelope_;
  ReceiveTarget* target_ = nullptr;
  std::size_t delivered_ = 0;
  bool truncated_ = false;
  bool finished_ = false;
  double started_ = 0;
  // The message lands here first for targets with holes, and for host
  // targets a pending direct receive overlaps; delivered at the end.
  std::vector<char> packed_;
  transport::Transport* transport_ = nullptr;      // the one moving the data
  std::unique_ptr<transport::Transfer> transfer_;  // after packed_: may write it until destroyed
};

// Pulls `envelope`'s message into `target` before returning and sets the
// status's count to the bytes delivered. The wait serves nothing else: it
// runs where nothing else is pending, or under the operation table's lock
// (a persistent receive's completion).
Status pull_now(const Envelope& envelope, ReceiveTarget* target, MPI_Status* status);

// The error of a receive that took `delivered` bytes of a larger message.
Status truncated_receive(std::size_t delivered);

// The byte count a truncated receive's status reports: what this MPI
// reports for its own truncated messages, the message's size (Open MPI) or
// the receive's capacity. Learnt once by learn_truncated_count(), at MPI_Init.
std::size_t truncated_count(std::size_t message_bytes, std::size_t capacity);
void learn_truncated_count();

}  // namespace cumpi::protocol
