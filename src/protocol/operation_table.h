// Bookkeeping of the engine's outstanding device operations. Wait, test and
// every intercepted call ask it, through two counters, whether there is
// anything to do: a branch when there is not.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "protocol/operations.h"
#include "runtime/engine_lock.h"

namespace cumpi::protocol {

class OperationTable {
 public:
  // Pending operations are owned here until they complete.
  void add_pending(std::unique_ptr<Operation> operation);
  // Detaches a completed operation from the table; the caller owns it.
  std::unique_ptr<Operation> take_pending(std::size_t index);
  std::vector<Operation*>& pending() { return pending_; }
  // The pending operation reporting into `outcome`, if any.
  Operation* find_pending(const Outcome* outcome);

  void add_persistent(std::unique_ptr<PersistentOperation> operation);
  // By request handle, through an index (a window of persistent requests
  // looks each up at start and at completion).
  PersistentOperation* find_persistent(MPI_Request request);
  // After an operation's request handle changed (a restarted buffered send).
  void persistent_request_changed() { index_stale_ = true; }
  std::unique_ptr<PersistentOperation> take_persistent(MPI_Request request);
  std::vector<PersistentOperation*> orphaned_persistent();
  std::vector<PersistentOperation*> active_persistent_receives();
  // After marking a persistent operation freed_by_user.
  void publish_orphans() { publish_counts(); }
  // After advancing pending operations: what they wait for may have changed.
  void publish_service() { publish_counts(); }

  std::size_t pending_count() const { return pending_count_.load(std::memory_order_relaxed); }
  std::size_t persistent_count() const { return persistent_count_.load(std::memory_order_relaxed); }

  // Guards the table and the operations in it.
  runtime::ThreadsMutex& mutex() { return mutex_; }

 private:
  runtime::ThreadsMutex mutex_;
  std::vector<Operation*> pending_;
  std::vector<std::unique_ptr<PersistentOperation>> persistent_;
  std::unordered_map<MPI_Request, PersistentOperation*> persistent_index_;
  bool index_stale_ = false;
  std::atomic<std::size_t> pending_count_{0};
  std::atomic<std::size_t> persistent_count_{0};

  PersistentOperation* find_persistent_slowly(MPI_Request request);
  // Keeps the process-wide counters in step (the process's table only).
  void publish_counts();
  bool publishes_ = false;
  friend OperationTable& operations();
};

OperationTable& operations();

// Pending plus persistent device requests of the process's table.
inline std::atomic<std::size_t> g_device_requests{0};

// True while any device request exists: wait and test calls then go through
// the engine, otherwise straight to MPI.
inline bool has_device_requests() { return g_device_requests.load(std::memory_order_relaxed) != 0; }

// Persistent operations freed while active: the progress engine finishes
// them, as no completion call of the user's will.
inline std::atomic<bool> g_orphaned_persistent{false};
// Started persistent receives not yet completed: an envelope may arrive in
// any of them, and its sender waits for the pull.
inline std::atomic<std::size_t> g_active_persistent_receives{0};
// Pending operations a peer waits for (Service::always), and posted receives
// that wait for an envelope's sender once envelopes may arrive
// (Service::if_envelopes).
inline std::atomic<std::size_t> g_serving_operations{0};
inline std::atomic<std::size_t> g_envelope_receives{0};

// Sets the entry state's kProgressWork from everything that gives the
// progress engine work between the user's completion calls: operations a
// peer waits for, receives the user freed, direct host receives while
// envelopes may arrive in them (host_receives.h).
void update_progress_work();

// True while any device operation is pending, or direct host receives may
// hold an envelope: a call that waits for one of cumpi's requests advances
// them.
bool has_pending_operations();

// True while a peer may wait for this rank: operations of Service::always,
// posted receives while envelopes may arrive, direct host receives that may
// hold an envelope. Blocking host calls must then progress the engine
// instead of blocking in MPI; otherwise they go straight to MPI, and
// pending operations no peer waits for finish in the user's own completion
// calls.
bool needs_service();

}  // namespace cumpi::protocol
