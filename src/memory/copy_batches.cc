#include "memory/copy_batches.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "runtime/stats.h"

namespace cumpi::memory {

std::uint64_t CopyDevice::steady_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

namespace {
thread_local bool t_holding = false;
}  // namespace

HoldCopySubmissions::HoldCopySubmissions() : was_active_(std::exchange(t_holding, true)) {}
HoldCopySubmissions::~HoldCopySubmissions() { t_holding = was_active_; }
bool HoldCopySubmissions::active() { return t_holding; }

void CopyBatches::queue(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket,
                        bool both_on_device) {
  if (bytes == 0) {
    *ticket = CopyTicket{};  // nothing to copy: finished at its first poll
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto open = std::find_if(open_.begin(), open_.end(), [&](const Batch* batch) { return batch->context == context; });
  Batch* batch = nullptr;
  if (open == open_.end()) {
    batch = new Batch();
    batch->context = context;
    open_.push_back(batch);
  } else {
    batch = *open;
  }
  batch->copies.push_back(QueuedCopy{to, from, bytes, both_on_device});
  ++batch->tickets;
  ticket->batch = batch;
  ticket->event = nullptr;
  ticket->context = context;
}

void CopyBatches::flush() {
  if (HoldCopySubmissions::active()) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (Batch* batch : open_) {
    submit_locked(batch);
  }
  open_.clear();
}

void CopyBatches::submit_locked(Batch* batch) {
  std::size_t bytes = 0;
  for (const QueuedCopy& copy : batch->copies) {
    bytes += copy.bytes;
  }
  stats::ScopedRecord record(stats::Route::copy_batch, bytes);
  batch->status = device_.submit(batch->context, batch->copies, &batch->event);
  batch->submitted = true;
  batch->copies.clear();
}

CopyBatches::Batch* CopyBatches::submitted_batch_of(const CopyTicket& ticket, void** event, Status* status) {
  auto* batch = static_cast<Batch*>(ticket.batch);
  if (!batch->submitted) {
    submit_locked(batch);
    open_.erase(std::find(open_.begin(), open_.end(), batch));
  }
  *event = batch->complete ? nullptr : batch->event;
  *status = batch->status;
  return batch;
}

Status CopyBatches::poll(CopyTicket* ticket, bool* finished) {
  *finished = true;
  Status status;
  void* event = nullptr;
  Batch* batch = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (HoldCopySubmissions::active() && !static_cast<Batch*>(ticket->batch)->submitted) {
      *finished = false;
      return Status::ok();
    }
    batch = submitted_batch_of(*ticket, &event, &status);
    if (status.is_ok() && event != nullptr && batch->tickets > 1 && batch->found_running_at != 0 &&
        device_.now_ns() - batch->found_running_at < kRequeryNs) {
      *finished = false;
      return Status::ok();
    }
  }
  if (status.is_ok() && event != nullptr) {
    bool complete = false;
    status = device_.query(event, &complete);
    std::lock_guard<std::mutex> lock(mutex_);
    if (status.is_ok() && !complete) {
      batch->found_running_at = device_.now_ns();
      *finished = false;
      return Status::ok();
    }
    batch->complete = batch->complete || status.is_ok();
  }
  release(ticket);
  return status;
}

Status CopyBatches::wait(CopyTicket* ticket) {
  Status status;
  void* event = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    submitted_batch_of(*ticket, &event, &status);
  }
  if (status.is_ok() && event != nullptr) {
    status = device_.wait(event);
  }
  release(ticket);
  return status;
}

// The batch's event goes back with its last ticket.
void CopyBatches::release(CopyTicket* ticket) {
  auto* batch = static_cast<Batch*>(ticket->batch);
  ticket->batch = nullptr;
  void* event = nullptr;
  void* context = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--batch->tickets != 0) {
      return;
    }
    event = batch->event;
    context = batch->context;
    delete batch;
  }
  if (event != nullptr) {
    device_.release(context, event);
  }
}

}  // namespace cumpi::memory
