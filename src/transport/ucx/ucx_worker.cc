#include "transport/ucx/ucx_worker.h"

#include <poll.h>

#include <cstdint>
#include <cstring>

#include "memory/device_memory.h"
#include "runtime/log.h"
#include "runtime/stats.h"
#include "transport/ucx/ucx_library.h"

namespace cumpi::transport::ucx {

namespace {

struct State {
  Worker* worker = nullptr;
  bool tried = false;
  std::string why_not;
};

State& state() {
  static State* one = new State();  // lives until exit
  return *one;
}

// A forced close of an endpoint whose messages all ended: bounded, since
// the peer may be gone.
constexpr double kCloseSeconds = 2.0;
// The progress thread looks again after this long even without an event
// (a transport whose events UCX cannot signal).
constexpr int kProgressPollMilliseconds = 10;

// An endpoint to another node failed (its peer or the link is gone, also
// when a peer ends first at MPI_Finalize): its transfers then fail with
// UCX's status, reported by the calls that wait for them. Said here with
// the peer's rank, in place of UCX's own error line for an endpoint
// without a handler.
void endpoint_failed(void* peer, ucp_ep_h, ucs_status_t status) {
  CUMPI_LOG(info, "the UCX endpoint to rank %d failed: %s", static_cast<int>(reinterpret_cast<std::intptr_t>(peer)),
            ucp().ucs_status_string(status));
}

}  // namespace

std::recursive_mutex& lock() {
  static auto* one = new std::recursive_mutex();  // lives until exit
  return *one;
}

Worker* Worker::get(std::string* why_not) {
  std::lock_guard<std::recursive_mutex> held(lock());
  State& s = state();
  if (!s.tried) {
    s.tried = true;
    std::string library_why;
    if (library(&library_why) == nullptr) {
      s.why_not = library_why;
    } else {
      auto* made = new Worker();
      Status status = made->create();
      if (status.is_ok()) {
        s.worker = made;
      } else {
        s.why_not = status.message();
        made->shutdown();
        delete made;
      }
    }
    if (s.worker == nullptr) {
      CUMPI_LOG(info, "the ucx transport is off here: %s", s.why_not.c_str());
    }
  }
  if (s.worker == nullptr) {
    *why_not = s.why_not;
  }
  return s.worker;
}

Worker* Worker::existing() { return state().worker; }

bool Worker::failed() { return state().tried && state().worker == nullptr; }

Status Worker::create() {
  const Functions& f = ucp();
  ucp_config_t* config = nullptr;
  ucs_status_t status = f.ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) {
    return failure("ucp_config_read", status);
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  status = f.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context_);
  f.ucp_config_release(config);
  if (status != UCS_OK) {
    context_ = nullptr;
    return failure("ucp_init", status);
  }
  ucp_context_attr_t attributes{};
  attributes.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  status = f.ucp_context_query(context_, &attributes);
  if (status != UCS_OK) {
    return failure("ucp_context_query", status);
  }
  handles_cuda_ = (attributes.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // the engine and the progress thread, under lock()
  status = f.ucp_worker_create(context_, &worker_params, &worker_);
  if (status != UCS_OK) {
    worker_ = nullptr;
    return failure("ucp_worker_create", status);
  }
  ucp_address_t* address = nullptr;
  std::size_t bytes = 0;
  status = f.ucp_worker_get_address(worker_, &address, &bytes);
  if (status != UCS_OK) {
    return failure("ucp_worker_get_address", status);
  }
  address_.assign(reinterpret_cast<const unsigned char*>(address),
                  reinterpret_cast<const unsigned char*>(address) + bytes);
  f.ucp_worker_release_address(worker_, address);
  Status started = start_progress_thread();
  if (!started.is_ok()) {
    return started;
  }
  CUMPI_LOG(
      info, "UCX %s worker made (%zu-byte address); device memory %s", f.ucp_get_version_string(), bytes,
      handles_cuda_ ? "moved by UCX itself" : "not handled by this UCX: device messages go in pinned chunks over UCX");
  return Status::ok();
}

Status Worker::endpoint(int peer, bool same_node, const unsigned char* address, std::size_t bytes, ucp_ep_h* out) {
  std::lock_guard<std::recursive_mutex> held(lock());
  const auto found = endpoints_.find(peer);
  if (found != endpoints_.end()) {
    *out = found->second;
    return Status::ok();
  }
  if (bytes == 0) {
    return Status::error(StatusCode::internal, "no UCX address came from rank " + std::to_string(peer));
  }
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(address);
  params.err_mode = same_node ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  if (!same_node) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = endpoint_failed;
    params.err_handler.arg = reinterpret_cast<void*>(static_cast<std::intptr_t>(peer));
  }
  ucp_ep_h endpoint = nullptr;
  const ucs_status_t status = ucp().ucp_ep_create(worker_, &params, &endpoint);
  if (status != UCS_OK) {
    return failure("ucp_ep_create", status);
  }
  endpoints_.emplace(peer, endpoint);
  *out = endpoint;
  return Status::ok();
}

ucp_ep_h Worker::known_endpoint(int peer) const {
  std::lock_guard<std::recursive_mutex> held(lock());
  const auto found = endpoints_.find(peer);
  return found != endpoints_.end() ? found->second : nullptr;
}

void Worker::progress() {
  std::lock_guard<std::recursive_mutex> held(lock());
  if (worker_ != nullptr) {
    while (ucp().ucp_worker_progress(worker_) != 0) {
    }
  }
}

Status Worker::start_progress_thread() {
  const ucs_status_t status = ucp().ucp_worker_get_efd(worker_, &event_fd_);
  if (status != UCS_OK) {
    return failure("ucp_worker_get_efd", status);
  }
  progress_thread_ = std::thread([this] { serve(); });
  return Status::ok();
}

// Progresses until nothing is left, arms the worker's event, sleeps on it.
void Worker::serve() {
  const Functions& f = ucp();
  void* current = nullptr;
  while (!stopping_.load(std::memory_order_acquire)) {
    if (void* wanted = context_in_use_.load(std::memory_order_acquire); wanted != current) {
      memory::device_memory().make_current(wanted);
      current = wanted;
    }
    ucs_status_t armed = UCS_OK;
    {
      std::lock_guard<std::recursive_mutex> held(lock());
      while (f.ucp_worker_progress(worker_) != 0) {
      }
      armed = f.ucp_worker_arm(worker_);
    }
    if (armed == UCS_ERR_BUSY) {
      continue;  // events came between the progress and the arm
    }
    pollfd event{event_fd_, POLLIN, 0};
    (void)poll(&event, 1, kProgressPollMilliseconds);
  }
}

void Worker::shutdown() {
  const Functions& f = ucp();
  if (progress_thread_.joinable()) {
    stopping_.store(true, std::memory_order_release);
    f.ucp_worker_signal(worker_);
    progress_thread_.join();
  }
  std::lock_guard<std::recursive_mutex> held(lock());
  for (const auto& entry : endpoints_) {
    ucp_request_param_t params{};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    params.flags = UCP_EP_CLOSE_FLAG_FORCE;
    void* request = f.ucp_ep_close_nbx(entry.second, &params);
    const double deadline = stats::now_seconds() + kCloseSeconds;
    while (poll_request(&request) == UCS_INPROGRESS && stats::now_seconds() < deadline) {
    }
  }
  endpoints_.clear();
  if (worker_ != nullptr) {
    f.ucp_worker_destroy(worker_);
    worker_ = nullptr;
  }
  if (context_ != nullptr) {
    f.ucp_cleanup(context_);
    context_ = nullptr;
  }
  if (state().worker == this) {
    state().worker = nullptr;
  }
}

ucs_status_t poll_request(void** request) {
  if (*request == nullptr) {
    return UCS_OK;
  }
  if (UCS_PTR_IS_ERR(*request)) {
    const ucs_status_t status = UCS_PTR_STATUS(*request);
    *request = nullptr;
    return status;
  }
  std::lock_guard<std::recursive_mutex> held(lock());
  if (Worker* worker = Worker::existing(); worker != nullptr) {
    worker->progress();
  }
  const ucs_status_t status = ucp().ucp_request_check_status(*request);
  if (status != UCS_INPROGRESS) {
    ucp().ucp_request_free(*request);
    *request = nullptr;
  }
  return status;
}

}  // namespace cumpi::transport::ucx
