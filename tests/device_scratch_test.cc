#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "memory/device_scratch.h"

namespace cumpi::memory {
namespace {

// Allocations as the driver would give them: a buffer id each, gone when
// the "device is reset".
class FakeDevice final : public DeviceMemory {
 public:
  const char* name() const override { return "fake"; }
  bool device_memory_possible() override { return true; }
  PointerInfo query(const void* pointer) override {
    const auto found = live.find(reinterpret_cast<std::uintptr_t>(pointer));
    if (found == live.end()) return {};
    PointerInfo info;
    info.kind = MemoryKind::device;
    info.context = found->second.context;
    info.buffer_id = found->second.buffer_id;
    return info;
  }
  void* current_context() override { return nullptr; }
  Status pin(void*, std::size_t, const PointerInfo&) override { return Status::ok(); }
  void unpin(void*) override {}
  Status allocate(std::size_t bytes, const PointerInfo& owner, void** device) override {
    if (refuse) return Status::error(StatusCode::cuda_error, "cuMemAlloc failed: out of memory");
    next_address += (bytes + 0xfff) & ~std::uintptr_t{0xfff};
    live[next_address] = {owner.context, ++last_id, bytes};
    *device = reinterpret_cast<void*>(next_address);
    return Status::ok();
  }
  void free_allocation(void* device, const PointerInfo& owner) override {
    const auto found = live.find(reinterpret_cast<std::uintptr_t>(device));
    ASSERT_NE(found, live.end()) << "a block freed that the device no longer has";
    EXPECT_EQ(found->second.context, owner.context);
    live.erase(found);
    ++frees;
  }
  // Every allocation gone with its context; the addresses may come back.
  void reset() {
    live.clear();
    next_address = 0x100000;
  }

  struct Allocation {
    void* context;
    unsigned long long buffer_id;
    std::size_t bytes;
  };
  std::map<std::uintptr_t, Allocation> live;
  std::uintptr_t next_address = 0x100000;
  unsigned long long last_id = 0;
  int frees = 0;
  bool refuse = false;
};

char g_context_a;
char g_context_b;
PointerInfo in(char* context) {
  PointerInfo owner;
  owner.kind = MemoryKind::device;
  owner.context = context;
  return owner;
}

TEST(DeviceScratch, AGivenBackBlockServesTheNextCallOfItsContext) {
  FakeDevice device;
  DeviceScratch scratch(device, 1u << 20);
  void* first = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &first).is_ok());
  scratch.give_back(first);
  void* again = nullptr;
  ASSERT_TRUE(scratch.acquire(1000, in(&g_context_a), &again).is_ok());
  EXPECT_EQ(again, first);
  EXPECT_EQ(scratch.allocations(), 1u);
  scratch.give_back(again);
  EXPECT_EQ(scratch.kept_bytes(), 4096u);
}

TEST(DeviceScratch, BlocksBelongToTheirContext) {
  FakeDevice device;
  DeviceScratch scratch(device, 1u << 20);
  void* a = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &a).is_ok());
  scratch.give_back(a);
  void* b = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_b), &b).is_ok());
  EXPECT_NE(b, a);
  EXPECT_EQ(device.live[reinterpret_cast<std::uintptr_t>(b)].context, &g_context_b);
}

TEST(DeviceScratch, ABlockInUseIsNotHandedOutTwice) {
  FakeDevice device;
  DeviceScratch scratch(device, 1u << 20);
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &first).is_ok());
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &second).is_ok());
  EXPECT_NE(first, second);
  // Both given back: one free block per context is kept, the smaller goes.
  scratch.give_back(first);
  scratch.give_back(second);
  EXPECT_EQ(device.live.size(), 1u);
  EXPECT_EQ(device.frees, 1);
}

TEST(DeviceScratch, TheSmallerOfTwoFreeBlocksIsFreed) {
  FakeDevice device;
  DeviceScratch scratch(device, 1u << 20);
  void* small = nullptr;
  void* large = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &small).is_ok());
  ASSERT_TRUE(scratch.acquire(65536, in(&g_context_a), &large).is_ok());
  scratch.give_back(large);
  scratch.give_back(small);
  ASSERT_EQ(device.live.size(), 1u);
  EXPECT_EQ(device.live.begin()->first, reinterpret_cast<std::uintptr_t>(large));
}

TEST(DeviceScratch, BlocksOverTheLimitAreFreedAfterTheirCall) {
  FakeDevice device;
  DeviceScratch scratch(device, 8192);
  void* big = nullptr;
  ASSERT_TRUE(scratch.acquire(8193, in(&g_context_a), &big).is_ok());
  scratch.give_back(big);
  EXPECT_TRUE(device.live.empty());
  EXPECT_EQ(scratch.kept_bytes(), 0u);
}

TEST(DeviceScratch, ABlockGoneWithAResetDeviceIsForgottenNotFreed) {
  FakeDevice device;
  DeviceScratch scratch(device, 1u << 20);
  void* first = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &first).is_ok());
  scratch.give_back(first);
  device.reset();
  // The application's own allocation now has the dead block's address.
  void* users = nullptr;
  ASSERT_TRUE(device.allocate(4096, in(&g_context_a), &users).is_ok());
  ASSERT_EQ(users, first);
  void* again = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &again).is_ok());
  EXPECT_NE(again, users);
  scratch.give_back(again);
  scratch.clear();
  EXPECT_EQ(device.live.count(reinterpret_cast<std::uintptr_t>(users)), 1u) << "the application's memory freed";
  EXPECT_EQ(device.frees, 1);
}

TEST(DeviceScratch, AFailedAllocationSaysWhy) {
  FakeDevice device;
  device.refuse = true;
  DeviceScratch scratch(device, 1u << 20);
  void* block = nullptr;
  const Status status = scratch.acquire(4096, in(&g_context_a), &block);
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("cuMemAlloc"), std::string::npos);
  EXPECT_EQ(block, nullptr);
}

TEST(DeviceScratch, ClearFreesWhatIsKept) {
  FakeDevice device;
  DeviceScratch scratch(device, 1u << 20);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_a), &a).is_ok());
  ASSERT_TRUE(scratch.acquire(4096, in(&g_context_b), &b).is_ok());
  scratch.give_back(a);
  scratch.give_back(b);
  scratch.clear();
  EXPECT_TRUE(device.live.empty());
  EXPECT_EQ(scratch.kept_bytes(), 0u);
}

}  // namespace
}  // namespace cumpi::memory
