#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "memory/staging_pool.h"

namespace cumpi::memory {
namespace {

// Counts what the pool asks of the driver.
class CountingMemory final : public DeviceMemory {
 public:
  const char* name() const override { return "counting"; }
  bool device_memory_possible() override { return false; }
  PointerInfo query(const void*) override { return {}; }
  void* current_context() override { return nullptr; }
  Status pin(void* host, std::size_t, const PointerInfo&) override {
    ++pins;
    if (refuse_pinning) return Status::error(StatusCode::cuda_error, "refused");
    pinned.insert(host);
    return Status::ok();
  }
  void unpin(void* host) override {
    ++unpins;
    pinned.erase(host);
  }
  Status allocate(std::size_t, const PointerInfo&, void**) override {
    return Status::error(StatusCode::internal, "not asked of the pool");
  }
  void free_allocation(void*, const PointerInfo&) override {}

  int pins = 0;
  int unpins = 0;
  bool refuse_pinning = false;
  std::set<void*> pinned;
};

TEST(StagingPool, SizeClassesArePowersOfTwoFrom64KiB) {
  EXPECT_EQ(StagingPool::size_class(1), 64u << 10);
  EXPECT_EQ(StagingPool::size_class(64u << 10), 64u << 10);
  EXPECT_EQ(StagingPool::size_class((64u << 10) + 1), 128u << 10);
  EXPECT_EQ(StagingPool::size_class(5u << 20), 8u << 20);
}

TEST(StagingPool, ReleasedBlocksAreReusedWithoutPinningAgain) {
  CountingMemory memory;
  StagingPool pool(memory, 16u << 20);
  PinnedBlock first;
  ASSERT_TRUE(pool.acquire(100000, {}, &first).is_ok());
  EXPECT_TRUE(first.pinned);
  EXPECT_GE(first.capacity, 100000u);
  std::memset(first.data, 0xab, first.capacity);  // the memory is really there
  char* address = first.data;
  pool.release(first);
  PinnedBlock second;
  ASSERT_TRUE(pool.acquire(120000, {}, &second).is_ok());
  EXPECT_EQ(second.data, address);
  EXPECT_EQ(memory.pins, 1);
  EXPECT_EQ(pool.blocks_created(), 1u);
  pool.release(second);
}

TEST(StagingPool, BlocksInUseAreDistinct) {
  CountingMemory memory;
  StagingPool pool(memory, 16u << 20);
  PinnedBlock a;
  PinnedBlock b;
  ASSERT_TRUE(pool.acquire(1000, {}, &a).is_ok());
  ASSERT_TRUE(pool.acquire(1000, {}, &b).is_ok());
  EXPECT_NE(a.data, b.data);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.retained_bytes(), 2 * (64u << 10));
}

TEST(StagingPool, BeyondTheLimitBlocksAreFreed) {
  CountingMemory memory;
  StagingPool pool(memory, 1u << 20);
  PinnedBlock big;
  ASSERT_TRUE(pool.acquire(4u << 20, {}, &big).is_ok());
  pool.release(big);
  EXPECT_EQ(pool.retained_bytes(), 0u);
  EXPECT_EQ(memory.unpins, 1);
  EXPECT_TRUE(memory.pinned.empty());
}

TEST(StagingPool, ClearUnpinsEverything) {
  CountingMemory memory;
  StagingPool pool(memory, 64u << 20);
  for (std::size_t bytes : {1000u, 200000u, 3000000u}) {
    PinnedBlock block;
    ASSERT_TRUE(pool.acquire(bytes, {}, &block).is_ok());
    pool.release(block);
  }
  EXPECT_EQ(memory.pinned.size(), 3u);
  pool.clear();
  EXPECT_TRUE(memory.pinned.empty());
  EXPECT_EQ(pool.retained_bytes(), 0u);
}

TEST(StagingPool, RefusedPinningStillGivesUsableMemory) {
  CountingMemory memory;
  memory.refuse_pinning = true;
  StagingPool pool(memory, 1u << 20);
  PinnedBlock block;
  ASSERT_TRUE(pool.acquire(5000, {}, &block).is_ok());
  EXPECT_FALSE(block.pinned);
  std::memset(block.data, 1, 5000);
  pool.release(block);
  pool.clear();
  EXPECT_EQ(memory.unpins, 0);  // never pinned, never unpinned
}

}  // namespace
}  // namespace cumpi::memory
