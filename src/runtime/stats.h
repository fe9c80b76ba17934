// Per-route counters (CUMPI_STATS=1): calls, bytes and time, printed per rank
// at MPI_Finalize. Nothing is counted unless enabled.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

namespace cumpi::stats {

enum class Route {
  intercepted,        // every intercepted call while active, whatever its route
  staged_p2p,         // device point-to-point in plain MPI format through pinned host copies (eager)
  ipc,                // rendezvous messages through a CUDA IPC mapping (each side counts its own)
  pipeline,           // rendezvous messages through the staged pipeline
  ucx,                // rendezvous messages moved by UCX
  staged_collective,  // device collective: device->host, PMPI collective, host->device
  copy_batch,         // submissions of queued copies (inside the routes above: a call is a batch)
  count_,
};

extern std::atomic<bool> g_enabled;

inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

// Which end of a rendezvous message counted it (the rows say "sent" and
// "received"); every other route counts with Side::none.
enum class Side { none, sent, received };

double now_seconds();
void record(Route route, std::size_t bytes, double seconds, Side side = Side::none);
std::string format_table(int rank);

// Times a scope and records it on a route, when statistics are enabled.
class ScopedRecord {
 public:
  ScopedRecord(Route route, std::size_t bytes)
      : route_(route), bytes_(bytes), start_(enabled() ? now_seconds() : 0.0) {}
  ~ScopedRecord() {
    if (enabled()) {
      record(route_, bytes_, now_seconds() - start_);
    }
  }
  ScopedRecord(const ScopedRecord&) = delete;
  ScopedRecord& operator=(const ScopedRecord&) = delete;
  void add_bytes(std::size_t bytes) { bytes_ += bytes; }

 private:
  Route route_;
  std::size_t bytes_;
  double start_;
};

}  // namespace cumpi::stats
