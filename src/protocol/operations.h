// The device operations the engine keeps between calls.
#pragma once

#include <memory>
#include <vector>

#include "memory/staged_buffer.h"
#include "protocol/receive_target.h"
#include "runtime/mpi_api.h"
#include "runtime/stats.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// What a completed device operation reports through its generalized request.
// Shared between the operation and MPI's generalized request, whose free
// function may run before the operation completes (MPICH calls it from
// MPI_Request_free) or long after (a wait that comes late).
struct Outcome {
  MPI_Status status{};
  MPI_Count received_bytes = 0;
  bool cancelled = false;
  int error = MPI_SUCCESS;
  // Whose error handler hears of `error`: the operation's communicator (an
  // MPI library would report a generalized request's error through
  // MPI_COMM_WORLD's; cumpi's completion calls report it themselves).
  MPI_Comm comm{};
  // `error` came from completing the inner request: MPI ran the handler of
  // the request's communicator then, and cumpi must not run it again.
  bool reported = false;
};

// What cumpi adds to the completion an MPI call reported for one request:
// whether cumpi finishes that request, and the error it found (to go to
// comm's error handler; the MPI library's own errors stand as they came).
struct Finished {
  bool ours = false;
  MPI_Comm comm{};
  int error = MPI_SUCCESS;
  bool reported = false;  // MPI ran comm's handler for `error` already
};

// Whether a peer may be waiting for this rank to advance an operation. An
// operation no peer waits for (an eager send, a receive of plain data, a
// copy-back) is finished by the user's own completion call, as MPI finishes
// its own requests; only the others make host traffic pay for progress.
enum class Service {
  none,
  if_envelopes,  // a posted receive: once an envelope may arrive, its sender waits for the pull and FIN
  always,        // a rendezvous send (pull requests, pushed chunks, FIN) or a pull under way
};

// A nonblocking operation of the engine, shown to the user as a generalized
// request (MPI_Grequest_start) that completes when the operation does. The
// operation table owns it; the progress engine advances it.
class Operation {
 public:
  virtual ~Operation() = default;
  // Moves the operation on without ever blocking; true once it is complete
  // and `outcome` is filled in.
  virtual bool advance() = 0;
  // What the operation's peer waits for now (it changes as advance() moves on).
  virtual Service service() const { return Service::none; }
  // MPI_Cancel on the user's request while the operation is pending.
  virtual int cancel() { return MPI_SUCCESS; }

  MPI_Request user = MPI_REQUEST_NULL;
  std::shared_ptr<Outcome> outcome = std::make_shared<Outcome>();
};

// An inner MPI request posted on staged host buffers: complete once the
// inner one is and the received bytes are back on the device.
class StagedOperation final : public Operation {
 public:
  bool advance() override;
  int cancel() override;

  MPI_Request inner = MPI_REQUEST_NULL;
  std::vector<memory::StagedBuffer> reads;   // released at completion
  std::vector<memory::StagedBuffer> writes;  // copied back at completion
  // Point-to-point receives copy back only the bytes that arrived (the rest
  // of the device buffer stays as it was); collectives fill whole spans.
  bool copy_back_received_only = false;
  stats::Route route = stats::Route::staged_p2p;  // where the copy-back time is counted

 private:
  void finish(int test_result, const MPI_Status& inner_status);
};

// A persistent device request. The user's handle is a real persistent MPI
// request over a staged host buffer that lives as long as the request; each
// MPI_Start refreshes the host copy, each completion copies received bytes
// back to the device.
// Persistent receives are watched as every receive is: host ones too, when
// an envelope fits.
struct PersistentOperation {
  PersistentOperation() = default;
  PersistentOperation(const PersistentOperation&) = delete;
  PersistentOperation& operator=(const PersistentOperation&) = delete;
  ~PersistentOperation();

  MPI_Request request = MPI_REQUEST_NULL;
  bool is_receive = false;
  memory::StagedBuffer staged;    // sends
  ReceiveTarget target;           // receives
  MPI_Comm comm = MPI_COMM_NULL;  // hears of errors; receives: a sender's rank is told in it
  bool active = false;            // started; completion not yet handled
  bool freed_by_user = false;     // MPI_Request_free while active

  // A started receive whose message came while the user was not completing
  // it: finished by the progress engine (an envelope's message pulled, so
  // that its sender's blocking send can end, as with plain MPI), its result
  // kept for the user's completion call.
  bool finished_early = false;
  Status early_result;
  MPI_Status early_status{};

  // A persistent buffered send gets a new MPI request at each MPI_Start
  // (the user's handle changes, as MPI_Start allows; Open MPI's own does so
  // while a previous message is in flight): Open MPI 4.1, restarting a
  // persistent Bsend whose previous message has left, sends that message's
  // copy in the attached buffer again (its first eager fragment zeroed)
  // instead of the buffer's new contents, and a fresh request packs the
  // staged bytes. (A persistent send to MPI_PROC_NULL in the user's hands,
  // with MPI_Bsend doing the work, does not do: MPICH counts a started one
  // inactive in MPI_Waitany.)
  struct BufferedMessage {
    int count = 0;
    MPI_Datatype type{};  // a duplicate of the user's, who may free theirs
    int dest = 0;
    int tag = 0;
    MPI_Comm comm{};
  };
  std::unique_ptr<BufferedMessage> buffered;
};

}  // namespace cumpi::protocol
