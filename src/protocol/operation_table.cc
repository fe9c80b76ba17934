#include "protocol/operation_table.h"

#include <algorithm>

#include "protocol/envelope_grants.h"
#include "protocol/host_receives.h"
#include "runtime/runtime.h"

namespace cumpi::protocol {

void OperationTable::add_pending(std::unique_ptr<Operation> operation) {
  pending_.push_back(operation.release());
  pending_count_.store(pending_.size(), std::memory_order_relaxed);
  publish_counts();
}

std::unique_ptr<Operation> OperationTable::take_pending(std::size_t index) {
  std::unique_ptr<Operation> taken(pending_[index]);
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
  pending_count_.store(pending_.size(), std::memory_order_relaxed);
  publish_counts();
  return taken;
}

Operation* OperationTable::find_pending(const Outcome* outcome) {
  for (Operation* operation : pending_) {
    if (operation->outcome.get() == outcome) {
      return operation;
    }
  }
  return nullptr;
}

void OperationTable::add_persistent(std::unique_ptr<PersistentOperation> operation) {
  persistent_.push_back(std::move(operation));
  index_stale_ = true;
  persistent_count_.store(persistent_.size(), std::memory_order_relaxed);
  publish_counts();
}

PersistentOperation* OperationTable::find_persistent(MPI_Request request) {
  if (index_stale_) {
    persistent_index_.clear();
    for (const auto& operation : persistent_) {
      if (!operation->freed_by_user) persistent_index_[operation->request] = operation.get();
    }
    index_stale_ = false;
  }
  const auto found = persistent_index_.find(request);
  if (found == persistent_index_.end()) {
    return nullptr;
  }
  PersistentOperation* operation = found->second;
  if (operation->request != request || operation->freed_by_user) {
    index_stale_ = true;  // changed without a word: look again, in full
    return find_persistent_slowly(request);
  }
  return operation;
}

PersistentOperation* OperationTable::find_persistent_slowly(MPI_Request request) {
  for (const auto& operation : persistent_) {
    if (operation->request == request && !operation->freed_by_user) {
      return operation.get();
    }
  }
  return nullptr;
}

std::unique_ptr<PersistentOperation> OperationTable::take_persistent(MPI_Request request) {
  auto it = std::find_if(persistent_.begin(), persistent_.end(),
                         [&](const auto& operation) { return operation->request == request; });
  if (it == persistent_.end()) {
    return nullptr;
  }
  std::unique_ptr<PersistentOperation> taken = std::move(*it);
  persistent_.erase(it);
  index_stale_ = true;
  persistent_count_.store(persistent_.size(), std::memory_order_relaxed);
  publish_counts();
  return taken;
}

std::vector<PersistentOperation*> OperationTable::orphaned_persistent() {
  std::vector<PersistentOperation*> orphans;
  for (const auto& operation : persistent_) {
    if (operation->freed_by_user) {
      orphans.push_back(operation.get());
    }
  }
  return orphans;
}

std::vector<PersistentOperation*> OperationTable::active_persistent_receives() {
  std::vector<PersistentOperation*> active;
  for (const auto& operation : persistent_) {
    if (operation->is_receive && operation->active && !operation->finished_early) {
      active.push_back(operation.get());
    }
  }
  return active;
}

void OperationTable::publish_counts() {
  if (!publishes_) {
    return;
  }
  g_device_requests.store(pending_.size() + persistent_.size(), std::memory_order_relaxed);
  bool orphans = false;
  for (const auto& operation : persistent_) {
    orphans = orphans || operation->freed_by_user;
  }
  std::size_t serving = 0;
  std::size_t receives = 0;
  for (const Operation* operation : pending_) {
    const Service service = operation->service();
    serving += service == Service::always ? 1 : 0;
    receives += service == Service::if_envelopes ? 1 : 0;
  }
  g_orphaned_persistent.store(orphans, std::memory_order_relaxed);
  g_serving_operations.store(serving, std::memory_order_relaxed);
  g_envelope_receives.store(receives, std::memory_order_relaxed);
  update_progress_work();
}

namespace {

bool persistent_receives_need_service() {
  return g_active_persistent_receives.load(std::memory_order_relaxed) != 0 && envelopes_may_arrive();
}

}  // namespace

bool has_pending_operations() {
  return operations().pending_count() != 0 || direct_receives_need_service() || persistent_receives_need_service();
}

bool needs_service() {
  return g_serving_operations.load(std::memory_order_relaxed) != 0 ||
         (g_envelope_receives.load(std::memory_order_relaxed) != 0 && envelopes_may_arrive()) ||
         direct_receives_need_service() || persistent_receives_need_service();
}

void update_progress_work() {
  runtime::set_entry_state(runtime::kProgressWork, needs_service() ||
                                                       g_orphaned_persistent.load(std::memory_order_relaxed) ||
                                                       has_freed_direct_receives());
}

OperationTable& operations() {
  static OperationTable* table = [] {
    auto* process_table = new OperationTable();  // lives until process exit
    process_table->publishes_ = true;
    return process_table;
  }();
  return *table;
}

}  // namespace cumpi::protocol
