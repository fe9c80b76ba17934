#include "runtime/engine_lock.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace cumpi::runtime {

namespace {

std::atomic<bool> g_serves_threads{false};
std::mutex g_engine;
std::atomic<int> g_waiting{0};            // threads blocked on g_engine
std::atomic<unsigned> g_acquisitions{0};  // times g_engine was taken

thread_local int t_depth __attribute__((tls_model("initial-exec"))) = 0;  // EngineEntry nesting on this thread
thread_local bool t_holds __attribute__((tls_model("initial-exec"))) = false;
thread_local int t_busy __attribute__((tls_model("initial-exec"))) = 0;

void note_acquired() {
  g_acquisitions.fetch_add(1, std::memory_order_relaxed);
  t_holds = true;
}

bool try_acquire() {
  if (!g_engine.try_lock()) {
    return false;
  }
  note_acquired();
  return true;
}

void acquire() {
  if (try_acquire()) {
    return;
  }
  g_waiting.fetch_add(1, std::memory_order_relaxed);
  g_engine.lock();
  g_waiting.fetch_sub(1, std::memory_order_relaxed);
  note_acquired();
}

void release() {
  t_holds = false;
  g_engine.unlock();
}

bool may_give_up() { return t_holds && t_busy == 0; }

}  // namespace

void engine_serves_threads() { g_serves_threads.store(true, std::memory_order_relaxed); }

bool engine_serves_threads_now() { return g_serves_threads.load(std::memory_order_relaxed); }

EngineEntry::EngineEntry() {
  if (t_depth++ == 0 && engine_serves_threads_now()) {
    acquire();
  }
}

EngineEntry::~EngineEntry() {
  if (--t_depth == 0 && t_holds) {
    release();
  }
}

EngineEntryIfFree::EngineEntryIfFree() {
  if (t_depth != 0 || !engine_serves_threads_now()) {
    ++t_depth;
    entered_ = true;
    return;
  }
  if (try_acquire()) {
    t_depth = 1;
    entered_ = true;
  }
}

EngineEntryIfFree::~EngineEntryIfFree() {
  if (entered_ && --t_depth == 0 && t_holds) {
    release();
  }
}

// The depth goes with the lock: an engine call made meanwhile on this
// thread (a user's reduction operator calling MPI) takes it afresh.
EngineReleased::EngineReleased() {
  if (may_give_up()) {
    depth_ = t_depth;
    t_depth = 0;
    released_ = true;
    release();
  }
}

EngineReleased::~EngineReleased() {
  if (released_) {
    acquire();
    t_depth = depth_;
  }
}

EngineBusy::EngineBusy() { ++t_busy; }

EngineBusy::~EngineBusy() { --t_busy; }

// std::mutex promises no fairness: a thread that unlocks and locks again at
// once may keep the others out for ever. It waits until another took it.
void yield_engine() {
  if (!may_give_up() || g_waiting.load(std::memory_order_relaxed) == 0) {
    return;
  }
  const unsigned before = g_acquisitions.load(std::memory_order_relaxed);
  release();
  while (g_acquisitions.load(std::memory_order_relaxed) == before && g_waiting.load(std::memory_order_relaxed) != 0) {
    std::this_thread::yield();
  }
  acquire();
}

}  // namespace cumpi::runtime
