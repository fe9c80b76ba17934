// Copies queued to be submitted together: the pulls a progress sweep starts
// go to the GPU in one batch (one submission and one event) instead of a
// driver call, an event record and a query each. A copy engine supplies how to
// submit, query, wait and release; this keeps the open batches, who still
// waits on each, and what is already known of their completion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "memory/copy_engine.h"
#include "runtime/status.h"

namespace cumpi::memory {

struct QueuedCopy {
  void* to;
  const void* from;
  std::size_t bytes;
  bool both_on_device;  // known by the caller; otherwise the copy engine may ask
};

struct CopyDevice {
  // Submits `copies` in `context`; sets *event to what tells their
  // completion (null: nothing to wait for).
  std::function<Status(void* context, const std::vector<QueuedCopy>& copies, void** event)> submit;
  std::function<Status(void* event, bool* complete)> query;
  std::function<Status(void* event)> wait;
  std::function<void(void* context, void* event)> release;
  // Nanoseconds on a steady clock (a test's own clock in unit tests).
  std::function<std::uint64_t()> now_ns = steady_now_ns;

  static std::uint64_t steady_now_ns();
};

// While one lives on a thread, CopyBatches submit nothing for it: neither
// flush() nor a poll of an open batch does (wait() still does: it must
// block until the copy is done).
class HoldCopySubmissions {
 public:
  HoldCopySubmissions();
  ~HoldCopySubmissions();
  HoldCopySubmissions(const HoldCopySubmissions&) = delete;
  HoldCopySubmissions& operator=(const HoldCopySubmissions&) = delete;
  static bool active();

 private:
  bool was_active_;
};

class CopyBatches {
 public:
  explicit CopyBatches(CopyDevice device) : device_(std::move(device)) {}
  CopyBatches(const CopyBatches&) = delete;
  CopyBatches& operator=(const CopyBatches&) = delete;

  // Adds the copy to `context`'s open batch; ticket->batch holds it. An
  // empty copy gets an empty ticket, which the copy engine's poll finds done.
  void queue(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket,
             bool both_on_device = false);
  // Submits every open batch.
  void flush();
  // Sets *finished once the ticket's copy completed (the ticket is spent
  // then), submitting its batch first if it is still open. A batch of
  // several copies a query found running is asked again only after
  // kRequeryNs: a sweep over a window of receives then costs one query, not
  // one per receive (a lone copy is asked at every poll: its receive waits).
  Status poll(CopyTicket* ticket, bool* finished);
  Status wait(CopyTicket* ticket);

 private:
  struct Batch {
    void* context = nullptr;
    std::vector<QueuedCopy> copies;
    bool submitted = false;
    Status status;
    void* event = nullptr;
    bool complete = false;
    std::uint64_t found_running_at = 0;  // now_ns() of the last query that found it running; 0: none
    int tickets = 0;
  };
  // Submits the ticket's batch if still open; its event, null once complete.
  Batch* submitted_batch_of(const CopyTicket& ticket, void** event, Status* status);
  void submit_locked(Batch* batch);
  void release(CopyTicket* ticket);

  CopyDevice device_;
  std::mutex mutex_;
  std::vector<Batch*> open_;
};

constexpr std::uint64_t kRequeryNs = 1000;

}  // namespace cumpi::memory
