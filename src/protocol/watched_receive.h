// A receive that may take an envelope (DESIGN §3): device receives of any
// size and host receives of at least the envelope's size (or of a short
// envelope's, where this rank takes them). It lands what MPI
// delivers, recognises an envelope, and then pulls the real message; plain
// data is finished as the staged path does (copied back for device
// buffers). Receives also take messages a probe moved into the matched
// queue, before anything MPI still holds.
#pragma once

#include <memory>

#include "protocol/matched_queue.h"
#include "protocol/operations.h"
#include "protocol/pull.h"
#include "protocol/receive_target.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

class WatchedReceive final : public Operation {
 public:
  ~WatchedReceive() override;
  // Takes a queued message matching (comm, source, tag), or posts the
  // PMPI receive. `blocking`: it completes before the caller goes on.
  Status start(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
               MPI_Comm comm, bool blocking = false);
  // The message of a handle cumpi handed out (MPI_Mprobe of a queued one).
  Status start_queued(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where,
                      std::unique_ptr<QueuedMessage> message);

  bool advance() override;
  int cancel() override;
  Service service() const override {
    return done_ ? Service::none : (pulling_ ? Service::always : Service::if_envelopes);
  }
  // The outcome's error was returned by the MPI library (whose error
  // handler has run), not found by cumpi.
  bool error_from_mpi() const { return error_from_mpi_; }

 private:
  Status prepare(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, bool blocking);
  Status take_queued(std::unique_ptr<QueuedMessage> message);
  void complete(int error, std::size_t bytes);
  bool inner_completed();

  ReceiveTarget target_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request inner_ = MPI_REQUEST_NULL;
  MPI_Status matched_{};  // source and tag of the message
  std::unique_ptr<QueuedMessage> queued_;
  Pull pull_;
  bool pulling_ = false;
  bool done_ = false;
  bool error_from_mpi_ = false;
  std::uint64_t private_key_ = 0;  // host receives: registered with host_receives.h
};

// True when a host receive of (count, type) must be watched, or may have to
// take a queued message. (A blocking one also goes through the engine while
// device operations need service: see has_pending_operations.)
bool host_receive_needs_engine(int count, MPI_Datatype type);

// A nonblocking host receive that must be watched: straight into the
// user's memory (host_receives.h) unless it must land privately or take a
// queued message, which WatchedReceive does.
Status host_irecv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request);

// The blocking forms: run `operation` to completion (serving the engine's
// other operations meanwhile) and fill the user's status. Errors come back
// as MPI would return them.
Status run_to_completion(WatchedReceive& operation, MPI_Status* status);

// Receive entry points of the engine, for host and device buffers alike
// (`where`: memory::locate's answer for the buffer).
Status watched_recv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
                    MPI_Comm comm, MPI_Status* status);
Status watched_irecv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, int source, int tag,
                     MPI_Comm comm, MPI_Request* request);
// A blocking receive into host memory: the real MPI_Recv and a look at what
// arrived (an envelope is pulled before returning); while device operations
// need service, MPI_Irecv and a wait that serves them. Queued messages, and
// memory a pending receive may write while envelopes may arrive, take a
// watched receive instead.
Status host_recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
// After a real blocking receive into the user's host buffer delivered
// `received` bytes (*result its status): when they are an envelope, its
// message is pulled in and *result corrected.
Status look_at_host_receive(void* buffer, int count, MPI_Datatype type, MPI_Comm comm, std::size_t received,
                            MPI_Status* result);
// Into memory a pending receive may write, an envelope is safe only in a
// landing of its own (WatchedReceive's).
bool must_land_privately(const void* buffer, int count, MPI_Datatype type);

// MPI_Mrecv/Imrecv of a handle cumpi handed out.
Status queued_mrecv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, MPI_Message* message,
                    MPI_Status* status);
Status queued_imrecv(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where, MPI_Message* message,
                     MPI_Request* request);

}  // namespace cumpi::protocol
