// One engine, entered by one thread at a time, under MPI_THREAD_MULTIPLE.
//
// The engine's steps are compound: a receive looks at the matched queue and
// then posts to MPI; a probe takes a message out of MPI and queues it; a
// completed direct receive is examined and its envelope pulled. Each step
// must be atomic with respect to the others, or two threads break MPI's
// matching order between them. So every call that enters the engine holds
// this lock (recursively, per thread), and gives it up in two places only:
//   - around a blocking call into the real MPI (EngineReleased), which must
//     not keep other threads of the rank out while it waits for them;
//   - between the rounds of a loop that waits (yield_engine), so that a
//     thread this one waits for can post what it waits for.
// Neither happens while the thread holds references into shared engine
// state (EngineBusy marks such stretches): those run to their end.
//
// Under lower thread levels no lock is taken: only depth is counted.
#pragma once

#include <mutex>

namespace cumpi::runtime {

// Called once, after MPI_Init_thread granted MPI_THREAD_MULTIPLE, before
// the application can have a second thread in MPI.
void engine_serves_threads();
bool engine_serves_threads_now();

// Held for one call into the engine (recursive on one thread).
class EngineEntry {
 public:
  EngineEntry();
  ~EngineEntry();
  EngineEntry(const EngineEntry&) = delete;
  EngineEntry& operator=(const EngineEntry&) = delete;
};

// For the sweep on entry to a call: taken only when free (a thread in the
// engine progresses it already).
class EngineEntryIfFree {
 public:
  EngineEntryIfFree();
  ~EngineEntryIfFree();
  EngineEntryIfFree(const EngineEntryIfFree&) = delete;
  EngineEntryIfFree& operator=(const EngineEntryIfFree&) = delete;
  bool entered() const { return entered_; }

 private:
  bool entered_ = false;
};

// Given up for a blocking call of the real MPI, taken again after it; a
// no-op where the thread may not give it up (see EngineBusy).
class EngineReleased {
 public:
  EngineReleased();
  ~EngineReleased();
  EngineReleased(const EngineReleased&) = delete;
  EngineReleased& operator=(const EngineReleased&) = delete;

 private:
  int depth_ = 0;
  bool released_ = false;
};

// `call()`, a blocking call of the real MPI on buffers and requests of the
// caller's own, with the engine left to other threads meanwhile.
template <typename Call>
auto with_engine_released(Call call) {
  const EngineReleased released;
  return call();
}

// Marks a stretch that must not give the lock up (it holds an engine
// table's mutex, or an examination half recorded).
class EngineBusy {
 public:
  EngineBusy();
  ~EngineBusy();
  EngineBusy(const EngineBusy&) = delete;
  EngineBusy& operator=(const EngineBusy&) = delete;
};

// Between the rounds of a waiting loop: lets a waiting thread in, when one
// waits and this thread may give the lock up.
void yield_engine();

}  // namespace cumpi::runtime

namespace cumpi::runtime {

// The mutex of an engine table on a hot path (the direct receives', the
// operations'): a real mutex only while the engine serves several threads.
// Below MPI_THREAD_MULTIPLE one thread at a time calls MPI, and no thread
// of cumpi's own touches these tables, so an uncontended lock pair (about
// 15 ns, several per host receive or persistent request) buys nothing; a
// count of holders keeps try_lock's answer (false while held, the caller's
// own hold included: progress() relies on it not to re-enter a table it is
// in). The
// level is fixed in MPI_Init_thread, before the application can have a
// second thread in MPI.
class ThreadsMutex {
 public:
  void lock() {
    if (engine_serves_threads_now()) {
      mutex_.lock();
    } else {
      ++holders_;
    }
  }
  void unlock() {
    if (engine_serves_threads_now()) {
      mutex_.unlock();
    } else {
      --holders_;
    }
  }
  bool try_lock() {
    if (engine_serves_threads_now()) {
      return mutex_.try_lock();
    }
    if (holders_ != 0) {
      return false;
    }
    ++holders_;
    return true;
  }

 private:
  std::mutex mutex_;
  int holders_ = 0;  // below MPI_THREAD_MULTIPLE only
};

}  // namespace cumpi::runtime
