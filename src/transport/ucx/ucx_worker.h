// The process's UCX state: one UCP context (tag matching) and one worker,
// made at the first message that needs them, and one endpoint per peer,
// made from the address the peer sends with its first go-ahead. Closed at
// MPI_Finalize (after every transfer ended), also where the peer is gone.
// Used under the engine's lock only (the worker is single-threaded).
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/status.h"

namespace cumpi::transport::ucx {

class Worker {
 public:
  // The worker, made on the first call; null where UCX cannot be had here
  // (*why_not says why, the same on every later call).
  static Worker* get(std::string* why_not);
  // The worker if one was made, else null (progress and shutdown).
  static Worker* existing();
  // Whether making it was tried and failed.
  static bool failed();

  // Whether this UCX moves CUDA memory itself (its context lists
  // UCS_MEMORY_TYPE_CUDA): built with CUDA support.
  bool handles_cuda() const { return handles_cuda_; }
  const std::vector<unsigned char>& address() const { return address_; }
  ucp_worker_h handle() const { return worker_; }
  // The endpoint to world rank `peer`, made from its worker address on
  // first use.
  Status endpoint(int peer, const unsigned char* address, std::size_t bytes, ucp_ep_h* out);

  void progress();
  // Closes every endpoint (forced: every message has ended), the worker and
  // the context.
  void shutdown();

 private:
  Worker() = default;
  Status create();

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<unsigned char> address_;
  bool handles_cuda_ = false;
  std::unordered_map<int, ucp_ep_h> endpoints_;
};

// Waits (progressing the worker) for a request a nonblocking UCX call gave:
// its status once complete (UCS_INPROGRESS while not), freeing it then.
// Null and error pointers are complete at once.
ucs_status_t poll_request(void** request);

}  // namespace cumpi::transport::ucx
