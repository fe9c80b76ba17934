// A per-thread, scoped reentrancy guard. MPI calls made while a wrapper is
// already on this thread's stack (an MPI library calling MPI_* internally, a
// user-defined op calling MPI) go straight to the real function.
#pragma once

namespace cumpi::wrappers {

extern thread_local int t_wrapper_depth __attribute__((tls_model("initial-exec")));

class ReentryGuard {
 public:
  ReentryGuard() : nested_(t_wrapper_depth++ != 0) {}
  ~ReentryGuard() { --t_wrapper_depth; }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;
  bool nested() const { return nested_; }

 private:
  bool nested_;
};

}  // namespace cumpi::wrappers
