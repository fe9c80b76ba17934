#include <gtest/gtest.h>

#include <map>
#include <set>

#include "transport/cuda_ipc/ipc_cache.h"

namespace cumpi::transport {
namespace {

using memory::PointerInfo;

// Hands out fake mappings and records what the cache opens and closes.
class MappingDriver final : public IpcDriver {
 public:
  bool export_ipc(const void*, const PointerInfo&, IpcExport*) override { return false; }
  Status open_ipc(const IpcExport& exported, int, const PointerInfo&, void** mapped) override {
    ++opens;
    if (refuse_while_open != 0 && open.count(refuse_while_open) != 0) {
      return Status::error(StatusCode::cuda_error, "already mapped");
    }
    if (unreachable) {
      return Status::error(StatusCode::unreachable, "not visible");
    }
    *mapped = reinterpret_cast<void*>(next_address);
    open[exported.buffer_id] = next_address;
    next_address += 0x100000;
    return Status::ok();
  }
  void close_ipc(void* mapped, void*) override {
    for (auto it = open.begin(); it != open.end(); ++it) {
      if (reinterpret_cast<void*>(it->second) == mapped) {
        closed.insert(it->first);
        open.erase(it);
        return;
      }
    }
    ADD_FAILURE() << "closed a mapping that is not open";
  }
  bool shares_gpu_without_mps(const IpcExport&, void*) override { return false; }

  int opens = 0;
  std::map<std::uint64_t, std::uintptr_t> open;  // buffer id -> mapped address
  std::set<std::uint64_t> closed;
  std::uint64_t refuse_while_open = 0;  // refuse new mappings while this buffer is mapped
  bool unreachable = false;
  std::uintptr_t next_address = 0x7f0000000000;
};

IpcExport exported(std::uint64_t buffer_id, std::size_t bytes = 1 << 20) {
  IpcExport e;
  e.buffer_id = buffer_id;
  e.allocation_bytes = bytes;
  return e;
}

TEST(IpcCache, AMappingIsOpenedOnceAndReused) {
  MappingDriver driver;
  IpcCache cache(driver, 8, 1ull << 40);
  IpcMapping* first = nullptr;
  IpcMapping* second = nullptr;
  ASSERT_TRUE(cache.acquire(1, 0, exported(10), {}, &first).is_ok());
  cache.release(first);
  ASSERT_TRUE(cache.acquire(1, 0, exported(10), {}, &second).is_ok());
  cache.release(second);
  EXPECT_EQ(first, second);
  EXPECT_EQ(driver.opens, 1);
  EXPECT_EQ(cache.counters().hits, 1u);
}

TEST(IpcCache, BufferIdsAndSendersAreDistinctKeys) {
  MappingDriver driver;
  IpcCache cache(driver, 8, 1ull << 40);
  IpcMapping* mapping = nullptr;
  for (int sender : {1, 2}) {
    for (std::uint64_t id : {10u, 11u}) {
      ASSERT_TRUE(cache.acquire(sender, 0, exported(id + 100 * sender), {}, &mapping).is_ok());
      cache.release(mapping);
    }
  }
  EXPECT_EQ(driver.opens, 4);
  EXPECT_EQ(cache.counters().open_mappings, 4u);
}

TEST(IpcCache, TheLeastRecentlyUsedIsClosedBeyondTheEntryLimit) {
  MappingDriver driver;
  IpcCache cache(driver, 2, 1ull << 40);
  IpcMapping* mapping = nullptr;
  for (std::uint64_t id : {1u, 2u, 1u, 3u}) {  // 2 is the least recently used when 3 comes
    ASSERT_TRUE(cache.acquire(0, 0, exported(id), {}, &mapping).is_ok());
    cache.release(mapping);
  }
  EXPECT_EQ(driver.closed, std::set<std::uint64_t>({2}));
  EXPECT_EQ(cache.counters().open_mappings, 2u);
  EXPECT_EQ(cache.counters().evictions, 1u);
}

TEST(IpcCache, BytesAreBoundedToo) {
  MappingDriver driver;
  IpcCache cache(driver, 100, 3u << 20);
  IpcMapping* mapping = nullptr;
  for (std::uint64_t id = 1; id <= 5; ++id) {
    ASSERT_TRUE(cache.acquire(0, 0, exported(id, 1u << 20), {}, &mapping).is_ok());
    cache.release(mapping);
  }
  EXPECT_LE(cache.counters().mapped_bytes, 3u << 20);
  EXPECT_EQ(cache.counters().open_mappings, 3u);
}

TEST(IpcCache, MappingsInUseAreNeverEvicted) {
  MappingDriver driver;
  IpcCache cache(driver, 1, 1ull << 40);
  IpcMapping* held = nullptr;
  IpcMapping* other = nullptr;
  ASSERT_TRUE(cache.acquire(0, 0, exported(1), {}, &held).is_ok());
  ASSERT_TRUE(cache.acquire(0, 0, exported(2), {}, &other).is_ok());
  EXPECT_TRUE(driver.closed.empty()) << "a mapping with a copy in flight was closed";
  cache.release(other);
  cache.release(held);
  EXPECT_EQ(cache.counters().open_mappings, 1u);
}

TEST(IpcCache, ARefusedMappingIsRetriedAfterClosingTheSendersIdleOnes) {
  MappingDriver driver;
  IpcCache cache(driver, 100, 1ull << 40);
  IpcMapping* mapping = nullptr;
  ASSERT_TRUE(cache.acquire(0, 0, exported(1), {}, &mapping).is_ok());  // a buffer the sender later frees
  cache.release(mapping);
  driver.refuse_while_open = 1;  // its memory comes back as buffer 2: the driver refuses while 1 is mapped
  ASSERT_TRUE(cache.acquire(0, 0, exported(2), {}, &mapping).is_ok());
  cache.release(mapping);
  EXPECT_EQ(driver.closed, std::set<std::uint64_t>({1}));
  EXPECT_EQ(driver.opens, 3);
}

TEST(IpcCache, AnUnreachablePeerIsADeclineNotARetry) {
  MappingDriver driver;
  IpcCache cache(driver, 100, 1ull << 40);
  IpcMapping* mapping = nullptr;
  ASSERT_TRUE(cache.acquire(0, 0, exported(1), {}, &mapping).is_ok());
  cache.release(mapping);
  driver.unreachable = true;
  const Status status = cache.acquire(0, 0, exported(2), {}, &mapping);
  EXPECT_EQ(status.code(), StatusCode::unreachable);
  EXPECT_TRUE(driver.closed.empty());
}

TEST(IpcCache, ClearClosesEverything) {
  MappingDriver driver;
  IpcCache cache(driver, 100, 1ull << 40);
  IpcMapping* mapping = nullptr;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(cache.acquire(0, 0, exported(id), {}, &mapping).is_ok());
    cache.release(mapping);
  }
  cache.clear();
  EXPECT_TRUE(driver.open.empty());
  EXPECT_EQ(cache.counters().open_mappings, 0u);
  EXPECT_EQ(cache.counters().mapped_bytes, 0u);
}

}  // namespace
}  // namespace cumpi::transport
