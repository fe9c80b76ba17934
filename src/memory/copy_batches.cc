#include "memory/copy_batches.h"

#include <algorithm>

namespace cumpi::memory {

void CopyBatches::queue(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket) {
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
  batch->copies.push_back(QueuedCopy{to, from, bytes});
  ++batch->tickets;
  ticket->batch = batch;
  ticket->event = nullptr;
  ticket->context = context;
}

void CopyBatches::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Batch* batch : open_) {
    submit_locked(batch);
  }
  open_.clear();
}

void CopyBatches::submit_locked(Batch* batch) {
  batch->status = submit_(batch->context, batch->copies, &batch->event);
  batch->submitted = true;
  batch->copies.clear();
}

Status CopyBatches::event_of(const CopyTicket& ticket, void** event) {
  auto* batch = static_cast<Batch*>(ticket.batch);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!batch->submitted) {
    submit_locked(batch);
    open_.erase(std::find(open_.begin(), open_.end(), batch));
  }
  *event = batch->complete ? nullptr : batch->event;
  return batch->status;
}

void CopyBatches::mark_complete(const CopyTicket& ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  static_cast<Batch*>(ticket.batch)->complete = true;
}

void* CopyBatches::release(CopyTicket* ticket) {
  auto* batch = static_cast<Batch*>(ticket->batch);
  ticket->batch = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (--batch->tickets != 0) {
    return nullptr;
  }
  void* event = batch->event;
  if (!batch->submitted) {  // every ticket gave up before submission: nothing ran
    open_.erase(std::find(open_.begin(), open_.end(), batch));
  }
  delete batch;
  return event;
}

}  // namespace cumpi::memory
