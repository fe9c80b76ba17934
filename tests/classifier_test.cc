#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "cumpi/emulation.h"
#include "memory/classifier.h"
#include "memory/copy_engine.h"

namespace cumpi::memory {
namespace {

int g_static_buffer[64];

bool driver_loaded() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

class Classifier : public ::testing::Test {
 protected:
  void SetUp() override { start_classifier(); }
};

// AddressSanitizer's allocator serves malloc from arenas it maps itself,
// which the classifier does not know as heap (it asks the device memory,
// correctly but not call-free).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMallocUsesTheBrkHeap = false;
#else
constexpr bool kMallocUsesTheBrkHeap = true;
#endif

TEST_F(Classifier, NullAndSentinelsAreHost) {
  EXPECT_FALSE(on_device(nullptr));
  EXPECT_FALSE(on_device(reinterpret_cast<void*>(1)));  // MPI_IN_PLACE in Open MPI
}

TEST_F(Classifier, HeapStackAndStaticBuffersAreKnownHostWithoutAQuery) {
  std::unique_ptr<char[]> small(new char[64]);
  char on_stack[32];
  if (kMallocUsesTheBrkHeap) {
    EXPECT_TRUE(in_host_region(small.get()));
    EXPECT_TRUE(known_host(small.get()));  // the call-free test of the entry points
  }
  EXPECT_TRUE(in_host_region(on_stack));
  EXPECT_TRUE(in_host_region(g_static_buffer));
  EXPECT_TRUE(known_host(on_stack));
  EXPECT_TRUE(known_host(g_static_buffer));
  EXPECT_FALSE(on_device(small.get()));
  EXPECT_FALSE(on_device(on_stack));
  EXPECT_FALSE(on_device(g_static_buffer));
}

TEST_F(Classifier, AThreadsStackIsKnownOnceRead) {
  bool first = true;
  bool after = false;
  std::thread thread([&] {
    char local[16] = {};
    first = known_host(local);  // not read yet on this thread: "look closer"
    after = in_host_region(local) && known_host(local);
  });
  thread.join();
  EXPECT_FALSE(first);
  EXPECT_TRUE(after);
}

TEST_F(Classifier, MappedHostMemoryIsHost) {
  void* mapped = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  EXPECT_FALSE(in_host_region(mapped));  // outside the regions: the device memory answers
  EXPECT_FALSE(known_host(mapped));
  EXPECT_FALSE(on_device(mapped));
  munmap(mapped, 1 << 20);
}

// A process that never loaded the CUDA driver: the CUDA device memory says no
// device memory can exist, answers host for everything, and loads nothing.
TEST_F(Classifier, CudaDeviceMemoryWithoutADriverAnswersHostAndLoadsNothing) {
  ASSERT_FALSE(driver_loaded()) << "this test needs a process without libcuda";
  std::unique_ptr<DeviceMemory> cuda = make_cuda_device_memory();
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(cuda->device_memory_possible());
  std::vector<char> buffer(1 << 20);
  EXPECT_EQ(cuda->query(buffer.data()).kind, MemoryKind::host);
  EXPECT_FALSE(driver_loaded());
}

TEST_F(Classifier, EmulatedDeviceMemoryIsDeviceWithItsAllocation) {
  char* device = static_cast<char*>(cumpi_emu_malloc(10000));
  ASSERT_NE(device, nullptr);
  const PointerInfo info = classify(device + 100);
  EXPECT_EQ(info.kind, MemoryKind::device);
  EXPECT_EQ(info.base, reinterpret_cast<std::uintptr_t>(device));
  EXPECT_EQ(info.size, 10000u);
  char* other = static_cast<char*>(cumpi_emu_malloc(10));
  EXPECT_NE(classify(other).buffer_id, info.buffer_id);
  ASSERT_EQ(cumpi_emu_free(device), 0);
  // Freed: no allocation any more, and marked so that every use is refused.
  const PointerInfo freed = classify(device + 100);
  EXPECT_TRUE(freed.freed);
  EXPECT_EQ(freed.size, 0u);
  ASSERT_EQ(cumpi_emu_free(other), 0);
  EXPECT_NE(cumpi_emu_free(other), 0);  // double free is refused
}

// Host memory the system maps where freed device memory was is host memory.
TEST_F(Classifier, HostMemoryAtAFreedDeviceAddressIsHost) {
  char* device = static_cast<char*>(cumpi_emu_malloc(4096));
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(classify(device).kind, MemoryKind::device);
  ASSERT_EQ(cumpi_emu_free(device), 0);
  EXPECT_TRUE(classify(device).freed);
  void* host = mmap(device, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(host, static_cast<void*>(device));
  const PointerInfo now = classify(device);
  EXPECT_EQ(now.kind, MemoryKind::host);
  EXPECT_FALSE(now.freed);
  munmap(host, 4096);
}

// The first byte a call touches decides, else the pointer's own allocation.
TEST_F(Classifier, LocateSpanAnswersForTheFirstByteTouched) {
  char* device = static_cast<char*>(cumpi_emu_malloc(4096));
  ASSERT_NE(device, nullptr);
  std::vector<char> host(256);
  EXPECT_EQ(locate_span(host.data(), ByteSpan{0, 256}).kind, MemoryKind::host);

  const PointerInfo whole = locate_span(device, ByteSpan{0, 4096});
  EXPECT_EQ(whole.kind, MemoryKind::device);
  EXPECT_EQ(whole.base, reinterpret_cast<std::uintptr_t>(device));

  // A type whose data start away from its origin: the origin lies outside.
  const auto distance = static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(device) -
                                                    reinterpret_cast<std::uintptr_t>(host.data()));
  const PointerInfo shifted = locate_span(host.data(), ByteSpan{distance + 64, 128});
  EXPECT_EQ(shifted.kind, MemoryKind::device);
  EXPECT_EQ(shifted.base, whole.base);

  // MPI_BOTTOM with absolute displacements.
  const PointerInfo absolute =
      locate_span(nullptr, ByteSpan{static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(device)), 16});
  EXPECT_EQ(absolute.buffer_id, whole.buffer_id);

  // A span starting before its device allocation: the pointer's owner, so
  // that staging reports a bad buffer instead of treating it as host.
  EXPECT_EQ(locate_span(device + 8, ByteSpan{-16, 8}).buffer_id, whole.buffer_id);
  ASSERT_EQ(cumpi_emu_free(device), 0);
}

TEST_F(Classifier, LocateOfKnownHostPointersAsksNothing) {
  char host[64] = {};
  EXPECT_EQ(locate(host, 64, MPI_BYTE).kind, MemoryKind::host);
  EXPECT_EQ(locate(reinterpret_cast<void*>(1), 1, MPI_BYTE).kind, MemoryKind::host);  // Open MPI's MPI_IN_PLACE
}

TEST_F(Classifier, EmulatedCopiesRoundTripAndStopAtTheAllocationEnd) {
  char* device = static_cast<char*>(cumpi_emu_malloc(256));
  std::vector<char> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<char>(i);
  std::vector<char> out(256, 0);
  const PointerInfo owner = classify(device);
  ASSERT_TRUE(copy_engine().copy_to_device(device, in.data(), 256, owner).is_ok());
  ASSERT_TRUE(copy_engine().copy_to_host(out.data(), device, 256, owner).is_ok());
  EXPECT_EQ(in, out);
  EXPECT_FALSE(copy_engine().copy_to_host(out.data(), device + 1, 256, owner).is_ok());
  cumpi_emu_fail_next_copies(1);
  const Status failed = copy_engine().copy_to_host(out.data(), device, 16, owner);
  EXPECT_EQ(failed.code(), StatusCode::cuda_error);
  EXPECT_NE(failed.message().find("cuMemcpyDtoHAsync"), std::string::npos);
  EXPECT_TRUE(copy_engine().copy_to_host(out.data(), device, 16, owner).is_ok());
  cumpi_emu_free(device);
}

}  // namespace
}  // namespace cumpi::memory
