// The receiver's side of a rendezvous message: once an envelope arrived, the
// data is pulled through a CUDA IPC mapping of the sender's buffer (same
// node, both GPUs reachable) or through the staged pipeline, which the
// sender feeds on request. FIN then tells the sender its send is complete.
#pragma once

#include <cstddef>
#include <vector>

#include "memory/backend.h"
#include "protocol/envelope.h"
#include "protocol/receive_target.h"
#include "runtime/status.h"
#include "transport/ipc/ipc_cache.h"
#include "transport/staged/pipeline.h"

namespace cumpi::protocol {

class Pull {
 public:
  Pull() = default;
  ~Pull();
  Pull(const Pull&) = delete;
  Pull& operator=(const Pull&) = delete;

  // Starts pulling `envelope`'s message into `target`, which must outlive
  // the pull. A message larger than the target's capacity is truncated.
  Status start(const Envelope& envelope, ReceiveTarget* target);
  // Never blocks; true once the data is in place and FIN was sent.
  bool advance(Status* error);

  std::size_t delivered() const { return delivered_; }
  bool truncated() const { return truncated_; }

 private:
  enum class Route { none, ipc, pipeline };

  // Starts the IPC copy, or says why not (an empty reason means "not tried").
  bool start_ipc(std::string* decline_reason);
  Status start_pipeline();
  // Where the message goes: the target's contiguous memory, or packed_.
  char* destination();
  Status send_reply(const Reply& reply) const;
  void finish(Status* error);

  Route route_ = Route::none;
  bool peer_declined_ = false;  // IPC from this sender can never work here
  Envelope envelope_;
  ReceiveTarget* target_ = nullptr;
  std::size_t delivered_ = 0;
  bool truncated_ = false;
  bool finished_ = false;
  double started_ = 0;
  transport::IpcMapping* mapping_ = nullptr;
  memory::CopyTicket ticket_;
  transport::PipelineReceiver pipeline_;
  // The message lands here first for targets with holes, and for host
  // targets a pending direct receive overlaps; delivered at the end.
  std::vector<char> packed_;
};

// Pulls `envelope`'s message into `target` before returning and sets the
// status's count to the bytes delivered. The wait serves nothing else: it
// runs where nothing else is pending, or under the operation table's lock
// (a persistent receive's completion).
Status pull_now(const Envelope& envelope, ReceiveTarget* target, MPI_Status* status);

// The error of a receive that took `delivered` bytes of a larger message.
Status truncated_receive(std::size_t delivered);

}  // namespace cumpi::protocol
