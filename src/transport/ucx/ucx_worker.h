// The process's UCX state: one UCP context (tag matching) and one worker,
// made at the first message that needs them, and one endpoint per peer,
// made from the address the peer sends back on its first message from this
// rank. Closed at MPI_Finalize (after every transfer ended), also where the
// peer is gone.
//
// A progress thread of the worker's own serves UCX while the engine is
// elsewhere: a sender in an MPI call that is not cumpi's (a barrier) still
// answers its receivers' rendezvous over TCP. It sleeps on the worker's
// event descriptor, so it costs nothing while nothing arrives. Every UCX
// call, the engine's and the thread's, holds `lock()`.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/status.h"

namespace cumpi::transport::ucx {

// Held around every UCX call (recursive: a transfer's calls nest).
std::recursive_mutex& lock();

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
  // first use. To another node, a failure of the peer (gone, unreachable)
  // fails the endpoint's transfers with UCX's status instead of hanging
  // them (UCP_ERR_HANDLING_MODE_PEER). Not to this node's ranks: that mode
  // leaves out UCX's shared-memory transports (1.13 and 1.16 then send over
  // TCP, 5x slower on an H100 machine), and the launcher sees a rank die.
  Status endpoint(int peer, bool same_node, const unsigned char* address, std::size_t bytes, ucp_ep_h* out);
  // The endpoint to `peer` if one was made, else null.
  ucp_ep_h known_endpoint(int peer) const;

  // A CUDA context whose device memory UCX now moves: the progress thread
  // makes it current before it progresses (UCX's CUDA transports work in
  // the calling thread's context).
  void use_context(void* context) { context_in_use_.store(context, std::memory_order_release); }

  void progress();
  // Stops the progress thread, closes every endpoint (forced: every message
  // has ended), the worker and the context.
  void shutdown();

 private:
  Worker() = default;
  Status create();
  Status start_progress_thread();
  void serve();

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<unsigned char> address_;
  bool handles_cuda_ = false;
  std::unordered_map<int, ucp_ep_h> endpoints_;
  int event_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<void*> context_in_use_{nullptr};
  std::thread progress_thread_;
};

// Waits (progressing the worker) for a request a nonblocking UCX call gave:
// its status once complete (UCS_INPROGRESS while not), freeing it then.
// Null and error pointers are complete at once.
ucs_status_t poll_request(void** request);

}  // namespace cumpi::transport::ucx
