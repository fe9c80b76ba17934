#include "protocol/matched_queue.h"

#include <cstdint>
#include <type_traits>

#include "protocol/operation_table.h"
#include "protocol/progress.h"
#include "protocol/receive_target.h"
#include "protocol/short_envelope.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
#include "runtime/status_bytes.h"

namespace cumpi::protocol {

namespace {

bool matches(const QueuedMessage& message, MPI_Comm comm, int source, int tag) {
  return message.comm == comm && (source == MPI_ANY_SOURCE || source == message.source) &&
         (tag == MPI_ANY_TAG || tag == message.tag);
}

// Handles of handed-out messages: the entry's address where MPI_Message is a
// pointer (Open MPI: never one of its objects), else an integer whose kind
// bits are zero (MPICH's "invalid handle" kind: never one of its handles).
template <typename Handle>
Handle handle_of(const QueuedMessage* message, std::uint32_t serial) {
  if constexpr (std::is_pointer_v<Handle>) {
    (void)serial;
    return reinterpret_cast<Handle>(const_cast<QueuedMessage*>(message));
  } else {
    (void)message;
    return static_cast<Handle>(0x04000000u | (serial & 0x00ffffffu));
  }
}

// An envelope, or a short envelope's token, becomes the envelope.
Status recognise_envelope(QueuedMessage& queued) {
  const std::size_t bytes = queued.bytes.size();
  if (bytes == kEnvelopeBytes) {
    queued.is_envelope = read_envelope(queued.bytes.data(), &queued.envelope);
  } else {
    Status looked = short_envelope_arrived(queued.bytes.data(), bytes, queued.comm, queued.source, &queued.envelope,
                                           &queued.is_envelope);
    if (!looked.is_ok()) {
      return looked;
    }
  }
  if (queued.is_envelope) {
    queued.bytes.clear();
  }
  return Status::ok();
}

}  // namespace

Status MatchedQueue::take(MPI_Message* message, const MPI_Status& probed, MPI_Comm comm) {
  auto queued = std::make_unique<QueuedMessage>();
  queued->comm = comm;
  queued->source = probed.MPI_SOURCE;
  queued->tag = probed.MPI_TAG;
  const std::size_t bytes = status_bytes(probed);
  queued->bytes.resize(bytes);
  const int rc = real_mpi().Mrecv(queued->bytes.data(), static_cast<int>(bytes), MPI_BYTE, message, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  Status recognised = recognise_envelope(*queued);
  if (!recognised.is_ok()) {
    return recognised;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(queued));
  publish();
  return Status::ok();
}

const QueuedMessage* MatchedQueue::find(MPI_Comm comm, int source, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& message : queue_) {
    if (matches(*message, comm, source, tag)) {
      return message.get();
    }
  }
  return nullptr;
}

std::unique_ptr<QueuedMessage> MatchedQueue::pop(MPI_Comm comm, int source, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (matches(**it, comm, source, tag)) {
      std::unique_ptr<QueuedMessage> found = std::move(*it);
      queue_.erase(it);
      publish();
      return found;
    }
  }
  return nullptr;
}

MPI_Message MatchedQueue::hand_out(std::unique_ptr<QueuedMessage> message) {
  std::lock_guard<std::mutex> lock(mutex_);
  message->handle = handle_of<MPI_Message>(message.get(), ++serial_);
  const MPI_Message handle = message->handle;
  handed_out_.push_back(std::move(message));
  publish();
  return handle;
}

bool MatchedQueue::is_handed_out(MPI_Message handle) { return comm_of_handed_out(handle) != MPI_COMM_NULL; }

MPI_Comm MatchedQueue::comm_of_handed_out(MPI_Message handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& message : handed_out_) {
    if (message->handle == handle) {
      return message->comm;
    }
  }
  return MPI_COMM_NULL;
}

std::unique_ptr<QueuedMessage> MatchedQueue::take_handed_out(MPI_Message handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = handed_out_.begin(); it != handed_out_.end(); ++it) {
    if ((*it)->handle == handle) {
      std::unique_ptr<QueuedMessage> found = std::move(*it);
      handed_out_.erase(it);
      publish();
      return found;
    }
  }
  return nullptr;
}

void MatchedQueue::publish() {
  runtime::set_entry_state(runtime::kQueuedMessages, !queue_.empty() || !handed_out_.empty());
}

MatchedQueue& matched_queue() {
  static MatchedQueue* queue = new MatchedQueue();  // lives until exit
  return *queue;
}

void report_status(MPI_Status* status, int source, int tag, std::size_t bytes, int error) {
  if (status == MPI_STATUS_IGNORE) {
    return;
  }
  const RealMpi& mpi = real_mpi();
  status->MPI_SOURCE = source;
  status->MPI_TAG = tag;
  status->MPI_ERROR = error;
  mpi.Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(bytes));
  mpi.Status_set_cancelled(status, 0);
}

namespace {

// One look at MPI for a message: Iprobe, or Probe when blocking is safe
// (nothing of the engine's own is waiting for service meanwhile).
int look(int source, int tag, MPI_Comm comm, bool blocking, int* found, MPI_Status* status) {
  const RealMpi& mpi = real_mpi();
  if (blocking && !needs_service()) {
    *found = 1;
    // A probe takes nothing out of MPI: other threads may go on meanwhile.
    return runtime::with_engine_released([&] { return mpi.Probe(source, tag, comm, status); });
  }
  progress_if_pending();
  return mpi.Iprobe(source, tag, comm, found, status);
}

// Finds the next message for a probe: from the queue (*queued), or from MPI
// (*plain), taking a message of the envelope's size into the queue. `flag` is
// the nonblocking probes' (0 when nothing was found); null for a blocking
// probe, which always finds one.
Status find_message(int source, int tag, MPI_Comm comm, int* flag, const QueuedMessage** queued, MPI_Status* plain) {
  MatchedQueue& queue = matched_queue();
  const bool blocking = flag == nullptr;
  int found_here = 0;
  int* found = blocking ? &found_here : flag;
  for (;;) {
    *queued = has_queued_messages() ? queue.find(comm, source, tag) : nullptr;
    if (*queued != nullptr) {
      *found = 1;
      return Status::ok();
    }
    *found = 0;
    const int rc = look(source, tag, comm, blocking, found, plain);
    if (rc != MPI_SUCCESS) {
      return from_mpi(rc);
    }
    if (*found == 0) {
      if (!blocking) {
        return Status::ok();
      }
      runtime::yield_engine();
      continue;
    }
    if (plain->MPI_SOURCE == MPI_PROC_NULL || status_bytes(*plain) != kEnvelopeBytes) {
      return Status::ok();
    }
    // The same source and tag match the same message again: MPI's order.
    // Unless another thread's receive took it meanwhile: then look again.
    MPI_Message message{};
    MPI_Status probed{};
    int matched = 0;
    const int mrc = real_mpi().Improbe(plain->MPI_SOURCE, plain->MPI_TAG, comm, &matched, &message, &probed);
    if (mrc != MPI_SUCCESS) {
      return from_mpi(mrc);
    }
    if (matched == 0) {
      continue;
    }
    Status taken = queue.take(&message, probed, comm);
    if (!taken.is_ok()) {
      return taken;
    }
  }
}

}  // namespace

Status probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const QueuedMessage* queued = nullptr;
  MPI_Status plain{};
  Status result = find_message(source, tag, comm, flag, &queued, &plain);
  if (!result.is_ok() || (flag != nullptr && *flag == 0)) {
    return result;
  }
  if (queued != nullptr) {
    report_status(status, queued->source, queued->tag, queued->real_bytes(), MPI_SUCCESS);
  } else if (status != MPI_STATUS_IGNORE) {
    *status = plain;
  }
  return Status::ok();
}

Status mprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  MatchedQueue& queue = matched_queue();
  for (;;) {
    const QueuedMessage* queued = nullptr;
    MPI_Status plain{};
    Status result = find_message(source, tag, comm, flag, &queued, &plain);
    if (!result.is_ok() || (flag != nullptr && *flag == 0)) {
      return result;
    }
    if (queued != nullptr) {
      std::unique_ptr<QueuedMessage> taken = queue.pop(comm, queued->source, queued->tag);
      report_status(status, taken->source, taken->tag, taken->real_bytes(), MPI_SUCCESS);
      *message = queue.hand_out(std::move(taken));
      return Status::ok();
    }
    if (plain.MPI_SOURCE == MPI_PROC_NULL) {
      *message = MPI_MESSAGE_NO_PROC;
      if (status != MPI_STATUS_IGNORE) *status = plain;
      return Status::ok();
    }
    // A plain message that is not of the envelope's size: match exactly it
    // (or, when another thread's receive took it meanwhile, look again).
    MPI_Status probed{};
    int matched = 0;
    const int rc = real_mpi().Improbe(plain.MPI_SOURCE, plain.MPI_TAG, comm, &matched, message, &probed);
    if (rc != MPI_SUCCESS) {
      return from_mpi(rc);
    }
    if (matched == 0) {
      continue;
    }
    if (may_be_envelope(status_bytes(probed))) {
      // A message that may be an envelope goes through the queue (another
      // thread's, come in between, or a short envelope's token): look again.
      Status taken = queue.take(message, probed, comm);
      if (!taken.is_ok()) return taken;
      continue;
    }
    if (status != MPI_STATUS_IGNORE) {
      *status = probed;
    }
    return Status::ok();
  }
}

}  // namespace cumpi::protocol
