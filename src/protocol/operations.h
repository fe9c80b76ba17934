// The device operations the engine keeps between calls.
#pragma once

#include <memory>
#include <vector>

#include "memory/staged_buffer.h"
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
};

// A nonblocking device operation: an inner MPI request posted on staged
// host buffers, shown to the user as a generalized request
// (MPI_Grequest_start) that completes once the inner one has and the
// received bytes are back on the device. The operation table owns it.
struct PendingOperation {
  MPI_Request inner = MPI_REQUEST_NULL;
  MPI_Request user = MPI_REQUEST_NULL;
  std::vector<memory::StagedBuffer> reads;   // released at completion
  std::vector<memory::StagedBuffer> writes;  // copied back at completion
  // Point-to-point receives copy back only the bytes that arrived (the rest
  // of the device buffer stays as it was); collectives fill whole spans.
  bool copy_back_received_only = false;
  stats::Route route = stats::Route::staged_p2p;  // where the copy-back time is counted

  std::shared_ptr<Outcome> outcome = std::make_shared<Outcome>();
};

// A persistent device request. The user's handle is a real persistent MPI
// request over a staged host buffer that lives as long as the request; each
// MPI_Start refreshes the host copy, each completion copies received bytes
// back to the device.
struct PersistentOperation {
  MPI_Request request = MPI_REQUEST_NULL;
  bool is_receive = false;
  bool dense = true;                 // the span has no holes
  memory::StagedBuffer staged;
  bool active = false;               // started; completion not yet handled
  bool freed_by_user = false;        // MPI_Request_free while active
};

}  // namespace cumpi::protocol
