// The engine tables' lock below MPI_THREAD_MULTIPLE (the unit tests never
// ask for that level), and the inline array of the completion calls.
#include <gtest/gtest.h>

#include <mutex>

#include "runtime/engine_lock.h"
#include "runtime/inline_array.h"

namespace cumpi::runtime {
namespace {

TEST(ThreadsMutex, TryLockFailsWhileHeldEvenByTheHolder) {
  ASSERT_FALSE(engine_serves_threads_now());
  ThreadsMutex mutex;
  {
    std::lock_guard<ThreadsMutex> held(mutex);
    EXPECT_FALSE(mutex.try_lock());  // progress() must not re-enter a table it is iterating
  }
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.try_lock());
  mutex.unlock();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

TEST(InlineArray, HoldsItsValuesInlineAndBeyondOnTheHeap) {
  for (const std::size_t size : {std::size_t{0}, std::size_t{3}, std::size_t{4}, std::size_t{9}}) {
    InlineArray<int, 4> values(size, 7);
    for (std::size_t i = 0; i < size; ++i) {
      EXPECT_EQ(values[i], 7);
      values[i] = static_cast<int>(i);
    }
    for (std::size_t i = 0; i < size; ++i) EXPECT_EQ(values.data()[i], static_cast<int>(i));
  }
}

}  // namespace
}  // namespace cumpi::runtime
