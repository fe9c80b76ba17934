#include "protocol/host_receives.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "memory/datatype_layout.h"
#include "protocol/envelope_grants.h"
#include "protocol/matched_queue.h"
#include "protocol/operation_table.h"
#include "protocol/pull.h"
#include "protocol/receive_target.h"
#include "protocol/type_size_cache.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/runtime.h"
#include "runtime/status_bytes.h"

namespace cumpi::protocol {

namespace {

struct DirectReceive {
  MPI_Request request{};
  void* buffer = nullptr;
  int count = 0;
  MPI_Datatype type{};
  MPI_Comm comm{};
  std::uintptr_t first = 0;  // host bytes the receive may write: [first, last)
  std::uintptr_t last = 0;
  bool examined = false;  // looked at before its completing call (peeked, or settled)
  MPI_Status examined_status{};
  int examined_error = MPI_SUCCESS;
  bool freed = false;  // MPI_Request_free: cumpi completes it
};

struct PrivateReceive {
  std::uint64_t key = 0;
  std::uintptr_t first = 0;
  std::uintptr_t last = 0;
};

bool overlap(std::uintptr_t first, std::uintptr_t last, std::uintptr_t other_first, std::uintptr_t other_last) {
  return first < other_last && other_first < last;
}

class ReceiveTable {
 public:
  // Written in place: a receive built on the stack and copied in stalls on
  // store forwarding (its fields stored one by one, reloaded as vectors),
  // a good part of a host MPI_Irecv's cost.
  void add(MPI_Request request, void* buffer, int count, MPI_Datatype type, MPI_Comm comm, std::uintptr_t first,
           std::uintptr_t last) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    keys_.push_back(request);
    DirectReceive& receive = direct_.emplace_back();
    receive.request = request;
    receive.buffer = buffer;
    receive.count = count;
    receive.type = type;
    receive.comm = comm;
    receive.first = first;
    receive.last = last;
    publish();
  }

  // What a completing call found of a request in the table.
  enum class Leaving {
    absent,  // not a direct receive
    plain,   // gone from the table: plain data nobody examined; *comm set
    whole,   // gone from the table, copied to *out
  };
  // Takes the receive of `request` out of the table when its completion
  // brought `received` bytes, in one lookup: most completed requests of a
  // call are not direct receives. A receive whose bytes cannot be an
  // envelope and that nothing examined needs no more than its communicator.
  Leaving leave(MPI_Request request, std::size_t received, MPI_Comm* comm, DirectReceive* out) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    const std::size_t i = index_of(request);
    if (i == kAbsent) {
      return Leaving::absent;
    }
    const bool plain = !direct_[i].examined && !may_be_envelope(received);
    if (plain) {
      *comm = direct_[i].comm;
    } else {
      *out = direct_[i];
    }
    remove(i);
    return plain ? Leaving::plain : Leaving::whole;
  }

  bool find(MPI_Request request, DirectReceive* out) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    const std::size_t i = index_of(request);
    if (i == kAbsent) {
      return false;
    }
    *out = direct_[i];
    return true;
  }

  // Records an examination made before the completing call; false when the
  // receive is no longer pending.
  bool record(MPI_Request request, const MPI_Status& status, int error) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    const std::size_t i = index_of(request);
    if (i == kAbsent) {
      return false;
    }
    direct_[i].examined = true;
    direct_[i].examined_status = status;
    direct_[i].examined_error = error;
    return true;
  }

  bool mark_freed(MPI_Request request) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    const std::size_t i = index_of(request);
    if (i == kAbsent) {
      return false;
    }
    direct_[i].freed = true;
    keys_[i] = MPI_REQUEST_NULL;  // the user's handle is gone: lookups pass it over
    ++freed_;
    publish();
    return true;
  }

  std::vector<DirectReceive> freed() {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    std::vector<DirectReceive> out;
    for (const DirectReceive& receive : direct_) {
      if (receive.freed) out.push_back(receive);
    }
    return out;
  }

  void drop_freed(MPI_Request request) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    for (std::size_t i = 0; i < direct_.size(); ++i) {
      if (direct_[i].freed && direct_[i].request == request) {
        --freed_;
        remove(i);
        return;
      }
    }
  }

  // Unexamined direct receives overlapping [first, last).
  std::vector<DirectReceive> unexamined_overlapping(std::uintptr_t first, std::uintptr_t last) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    std::vector<DirectReceive> out;
    for (const DirectReceive& receive : direct_) {
      if (!receive.examined && !receive.freed && overlap(first, last, receive.first, receive.last)) {
        out.push_back(receive);
      }
    }
    return out;
  }

  std::uint64_t add_private(std::uintptr_t first, std::uintptr_t last) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    private_.push_back(PrivateReceive{++next_key_, first, last});
    return next_key_;
  }

  void remove_private(std::uint64_t key) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    for (std::size_t i = 0; i < private_.size(); ++i) {
      if (private_[i].key == key) {
        private_[i] = private_.back();
        private_.pop_back();
        return;
      }
    }
  }

  bool overlaps_direct(std::uintptr_t first, std::uintptr_t last) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    return overlaps_direct_locked(first, last);
  }

  bool overlaps_any(std::uintptr_t first, std::uintptr_t last) {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    if (overlaps_direct_locked(first, last)) {
      return true;
    }
    for (const PrivateReceive& receive : private_) {
      if (overlap(first, last, receive.first, receive.last)) return true;
    }
    return false;
  }

  bool directs_disjoint() {
    std::lock_guard<runtime::ThreadsMutex> lock(mutex_);
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
    for (const DirectReceive& receive : direct_) {
      if (receive.first != receive.last) spans.emplace_back(receive.first, receive.last);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
      if (spans[i].first < spans[i - 1].second) return false;
    }
    return true;
  }

  bool has_freed() const { return freed_count_.load(std::memory_order_relaxed) != 0; }

 private:
  static constexpr std::size_t kAbsent = ~std::size_t{0};

  // A lookup by the user's handle reads only the keys, 8 bytes a receive
  // (a window of 16 is two cache lines), not the receives themselves.
  std::size_t index_of(MPI_Request request) const {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] == request) return i;
    }
    return kAbsent;
  }

  void remove(std::size_t i) {
    keys_[i] = keys_.back();
    keys_.pop_back();
    direct_[i] = direct_.back();
    direct_.pop_back();
    publish();
  }

  bool overlaps_direct_locked(std::uintptr_t first, std::uintptr_t last) const {
    for (const DirectReceive& receive : direct_) {
      if (!receive.freed && overlap(first, last, receive.first, receive.last)) return true;
    }
    return false;
  }

  void publish() {
    const bool had_work = g_direct_receives.load(std::memory_order_relaxed) != 0 || freed_ != 0;
    g_direct_receives.store(direct_.size() - freed_, std::memory_order_relaxed);
    freed_count_.store(freed_, std::memory_order_relaxed);
    if (had_work != (direct_.size() != 0)) {
      update_progress_work();
    }
  }

  runtime::ThreadsMutex mutex_;
  std::vector<MPI_Request> keys_;  // direct_[i]'s request; MPI_REQUEST_NULL once the user freed it
  std::vector<DirectReceive> direct_;
  std::vector<PrivateReceive> private_;
  std::uint64_t next_key_ = 0;
  std::size_t freed_ = 0;
  std::atomic<std::size_t> freed_count_{0};
};

ReceiveTable& table() {
  static ReceiveTable* receives = new ReceiveTable();  // lives until exit
  return *receives;
}

// What arrived in a completed direct receive: plain data (nothing to do:
// MPI put it where it belongs) or an envelope, whose message is pulled into
// the buffer now; *status then reports the message.
int examine(const DirectReceive& receive, MPI_Status* status) {
  const std::size_t received = status_bytes(*status);
  if (!may_be_envelope(received)) {
    return MPI_SUCCESS;
  }
  int cancelled = 0;
  real_mpi().Test_cancelled(status, &cancelled);
  if (cancelled != 0) {
    return MPI_SUCCESS;
  }
  ReceiveTarget target;
  Envelope envelope;
  bool arrived = false;
  Status looked =
      ReceiveTarget::prepare(receive.buffer, receive.count, receive.type, memory::kHostMemory, false, &target);
  if (looked.is_ok()) {
    looked = target.envelope_arrived(received, receive.comm, status->MPI_SOURCE, &envelope, &arrived);
  }
  if (looked.is_ok() && arrived) {
    looked = pull_now(envelope, &target, status);
  }
  return request_error_code(looked);
}

// A receive left the table: a grant that waited for overlapping direct
// receives to end may be given now.
void after_leaving_table() {
  if (envelopes_may_arrive()) {
    serve_grants();
  }
}

// The bytes (buffer, count, type) may write: [first, last). The type a
// receive's entry point just looked up, when it lies packed, needs no
// layout.
bool receive_bytes(const void* buffer, int count, MPI_Datatype type, std::uintptr_t* first, std::uintptr_t* last) {
  bool packed = false;
  long long size = 0;
  if (count >= 0 && cached_type_packed(type, &packed) && packed && cached_type_size(type, &size)) {
    *first = reinterpret_cast<std::uintptr_t>(buffer);
    *last = *first + static_cast<std::uintptr_t>(count) * static_cast<std::uintptr_t>(size);
    return true;
  }
  memory::ByteSpan span;
  if (!memory::cached_span(type, count, &span)) {
    return false;
  }
  *first = reinterpret_cast<std::uintptr_t>(buffer) + static_cast<std::uintptr_t>(span.offset);
  *last = *first + span.bytes;
  return true;
}

}  // namespace

Status post_direct_receive(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                           MPI_Request* request, bool* posted) {
  *posted = true;
  std::uintptr_t first = 0;
  std::uintptr_t last = 0;
  if (!receive_bytes(buffer, count, type, &first, &last)) {
    // A bad datatype: MPI reports it, and nothing can arrive.
    return from_mpi(real_mpi().Irecv(buffer, count, type, source, tag, comm, request));
  }
  if (first != last && envelopes_may_arrive() && table().overlaps_any(first, last)) {
    *posted = false;
    return Status::ok();
  }
  const int rc = real_mpi().Irecv(buffer, count, type, source, tag, comm, request);
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  table().add(*request, buffer, count, type, comm, first, last);
  return Status::ok();
}

bool direct_receive_needs_no_engine() {
  return !has_queued_messages() && !envelopes_may_arrive() && !runtime::engine_serves_threads_now() &&
         smallest_watched_receive() == kEnvelopeBytes;
}

int post_direct_receive_now(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            MPI_Request* request) {
  bool posted = false;  // always: no envelope may arrive, so no overlap makes it land privately
  const Status status = post_direct_receive(buffer, count, type, source, tag, comm, request, &posted);
  return status.is_ok() ? MPI_SUCCESS : status.mpi_code();
}

Finished finish_direct_receive(MPI_Request request, MPI_Status* status) {
  Finished outcome;
  DirectReceive receive;
  switch (table().leave(request, status_bytes(*status), &outcome.comm, &receive)) {
    case ReceiveTable::Leaving::absent:
      return outcome;
    case ReceiveTable::Leaving::plain:  // the common case: nothing to look at
      outcome.ours = true;
      after_leaving_table();
      return outcome;
    case ReceiveTable::Leaving::whole:
      break;
  }
  outcome.ours = true;
  outcome.comm = receive.comm;
  if (receive.examined) {
    *status = receive.examined_status;
    outcome.error = receive.examined_error;
  } else {
    outcome.error = examine(receive, status);
  }
  after_leaving_table();
  return outcome;
}

Finished peek_direct_receive(MPI_Request request, MPI_Status* status) {
  Finished outcome;
  DirectReceive receive;
  if (!table().find(request, &receive)) {
    return outcome;
  }
  outcome.ours = true;
  outcome.comm = receive.comm;
  if (receive.examined) {
    *status = receive.examined_status;
    outcome.error = receive.examined_error;
    return outcome;
  }
  // Recorded first: the examination's own writes settle overlapping
  // receives, and must not come back to this one. Until the second record,
  // the entry says done with a placeholder: no other thread may look.
  const runtime::EngineBusy busy;
  table().record(request, *status, MPI_SUCCESS);
  outcome.error = examine(receive, status);
  table().record(request, *status, outcome.error);
  return outcome;
}

bool free_direct_receive(MPI_Request* request) {
  if (!has_direct_receives() || !table().mark_freed(*request)) {
    return false;
  }
  *request = MPI_REQUEST_NULL;
  runtime::set_entry_state(runtime::kProgressWork, true);
  return true;
}

void progress_freed_direct_receives() {
  if (!table().has_freed()) {
    return;
  }
  for (const DirectReceive& receive : table().freed()) {
    MPI_Request request = receive.request;
    int flag = 0;
    MPI_Status status{};
    if (real_mpi().Test(&request, &flag, &status) != MPI_SUCCESS || flag != 0) {
      table().drop_freed(receive.request);
      const int error = receive.examined ? receive.examined_error : examine(receive, &status);
      if (error != MPI_SUCCESS) {
        CUMPI_LOG(error, "a receive freed with MPI_Request_free failed with MPI error %d", error);
      }
    }
  }
}

bool has_freed_direct_receives() { return table().has_freed(); }

std::uint64_t add_private_receive(std::uintptr_t first, std::uintptr_t last) {
  return table().add_private(first, last);
}

void remove_private_receive(std::uint64_t key) {
  table().remove_private(key);
  after_leaving_table();
}

bool overlaps_pending_receive(std::uintptr_t first, std::uintptr_t last) { return table().overlaps_any(first, last); }

bool overlaps_pending_receive(const void* buffer, int count, MPI_Datatype type) {
  memory::ByteSpan span;
  if (!memory::cached_span(type, count, &span) || span.empty()) {
    return false;
  }
  const auto first = reinterpret_cast<std::uintptr_t>(buffer) + static_cast<std::uintptr_t>(span.offset);
  return table().overlaps_any(first, first + span.bytes);
}

bool overlaps_direct_receive(std::uintptr_t first, std::uintptr_t last) {
  return has_direct_receives() && table().overlaps_direct(first, last);
}

void settle_direct_receives(std::uintptr_t first, std::uintptr_t last) {
  if (!has_direct_receives() || first == last) {
    return;
  }
  for (const DirectReceive& receive : table().unexamined_overlapping(first, last)) {
    int flag = 0;
    MPI_Status status{};
    MPI_Request request = receive.request;
    if (real_mpi().Request_get_status(request, &flag, &status) == MPI_SUCCESS && flag != 0) {
      peek_direct_receive(request, &status);
    }
  }
}

bool direct_receives_disjoint() { return table().directs_disjoint(); }

bool direct_receives_need_service() { return has_direct_receives() && envelopes_may_arrive(); }

void progress_direct_receives() {
  if (!direct_receives_need_service()) {
    return;
  }
  constexpr std::uintptr_t kEverything = ~std::uintptr_t{0};
  settle_direct_receives(0, kEverything);
}

}  // namespace cumpi::protocol
