// Copies queued to be submitted together: the pulls a progress sweep starts
// go to the GPU in one batch (one driver call and one event) instead of a
// call, an event record and a query each. A backend supplies the
// submission; this keeps the open batches and who still waits on each.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "memory/backend.h"
#include "runtime/status.h"

namespace cumpi::memory {

struct QueuedCopy {
  void* to;
  const void* from;
  std::size_t bytes;
};

class CopyBatches {
 public:
  // Submits `copies` in `context`; sets *event to what tells their
  // completion (null when there is nothing to wait for).
  using Submit = std::function<Status(void* context, const std::vector<QueuedCopy>& copies, void** event)>;

  explicit CopyBatches(Submit submit) : submit_(std::move(submit)) {}
  CopyBatches(const CopyBatches&) = delete;
  CopyBatches& operator=(const CopyBatches&) = delete;

  // Adds the copy to `context`'s open batch; ticket->batch holds it.
  void queue(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket);
  // Submits every open batch.
  void flush();
  // The event of the ticket's batch, submitting it first if it is still
  // open; the submission's error if it failed. Null once a ticket of the
  // batch saw it complete (mark_complete): the others need not ask again.
  Status event_of(const CopyTicket& ticket, void** event);
  void mark_complete(const CopyTicket& ticket);
  // Ends the ticket's hold on its batch. Returns the batch's event when this
  // was the last ticket (the caller releases it), null otherwise.
  void* release(CopyTicket* ticket);

 private:
  struct Batch {
    void* context = nullptr;
    std::vector<QueuedCopy> copies;
    bool submitted = false;
    Status status;
    void* event = nullptr;
    bool complete = false;
    int tickets = 0;
  };
  void submit_locked(Batch* batch);

  Submit submit_;
  std::mutex mutex_;
  std::vector<Batch*> open_;
};

}  // namespace cumpi::memory
