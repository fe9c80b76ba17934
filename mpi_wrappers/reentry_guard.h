// A per-thread, scoped reentrancy guard, held while cumpi's engine runs.
// MPI calls made meanwhile on this thread (a user-defined op or a generalized
// request callback calling MPI) do not re-enter the progress engine. They are
// still classified: a device buffer handed straight to MPI would crash, and
// host buffers pass through anyway. MPI_Init and MPI_Finalize called from
// inside go straight to the real function.
#pragma once

namespace cumpi::wrappers {

extern thread_local int t_wrapper_depth __attribute__((tls_model("initial-exec")));

class ReentryGuard {
 public:
  ReentryGuard() { ++t_wrapper_depth; }
  ~ReentryGuard() { --t_wrapper_depth; }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;
  static bool inside() { return t_wrapper_depth != 0; }
};

}  // namespace cumpi::wrappers
