#include <gtest/gtest.h>

#include <vector>

#include "cumpi/emulation.h"
#include "memory/classifier.h"
#include "memory/staged_buffer.h"

namespace cumpi::memory {
namespace {

class StagedBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    start_classifier();
    device_ = static_cast<unsigned char*>(cumpi_emu_malloc(kBytes));
    std::vector<unsigned char> initial(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) initial[i] = static_cast<unsigned char>(i * 7);
    ASSERT_EQ(cumpi_emu_memcpy(device_, initial.data(), kBytes), 0);
  }
  void TearDown() override { cumpi_emu_free(device_); }

  std::vector<unsigned char> device_contents() {
    std::vector<unsigned char> out(kBytes);
    EXPECT_EQ(cumpi_emu_memcpy(out.data(), device_, kBytes), 0);
    return out;
  }

  // As the engine stages a buffer: located once, then staged.
  static Status read(const void* buffer, ByteSpan span, StagedBuffer* out) {
    return StagedBuffer::for_reading(buffer, span, locate_span(buffer, span), out);
  }
  static Status write(void* buffer, ByteSpan span, bool preserve, StagedBuffer* out) {
    return StagedBuffer::for_writing(buffer, span, locate_span(buffer, span), preserve, out);
  }

  static constexpr std::size_t kBytes = 4096;
  unsigned char* device_ = nullptr;
};

TEST_F(StagedBufferTest, HostBuffersPassUnchanged) {
  std::vector<char> host(100);
  StagedBuffer staged;
  ASSERT_TRUE(read(host.data(), ByteSpan{0, 100}, &staged).is_ok());
  EXPECT_FALSE(staged.staged());
  EXPECT_EQ(staged.mpi_pointer(), host.data());
}

TEST_F(StagedBufferTest, ReadingCopiesTheSpanAndKeepsTheGeometry) {
  StagedBuffer staged;
  // The call touches bytes [16, 16 + 64) of a buffer that starts at device_ + 100.
  ASSERT_TRUE(read(device_ + 100, ByteSpan{16, 64}, &staged).is_ok());
  ASSERT_TRUE(staged.staged());
  const unsigned char* host = static_cast<unsigned char*>(staged.mpi_pointer());
  for (std::size_t i = 16; i < 80; ++i) {
    EXPECT_EQ(host[i], static_cast<unsigned char>((100 + i) * 7)) << i;
  }
}

TEST_F(StagedBufferTest, WritingCopiesBackOnlyWhatArrived) {
  const std::vector<unsigned char> before = device_contents();
  StagedBuffer staged;
  ASSERT_TRUE(write(device_, ByteSpan{0, 1000}, false, &staged).is_ok());
  auto* host = static_cast<unsigned char*>(staged.mpi_pointer());
  for (int i = 0; i < 1000; ++i) host[i] = 0xee;
  ASSERT_TRUE(staged.copy_back(10).is_ok());
  std::vector<unsigned char> expected = before;
  for (int i = 0; i < 10; ++i) expected[i] = 0xee;
  EXPECT_EQ(device_contents(), expected);
}

TEST_F(StagedBufferTest, PreservedWritesKeepHoles) {
  const std::vector<unsigned char> before = device_contents();
  StagedBuffer staged;
  ASSERT_TRUE(write(device_, ByteSpan{0, 512}, true, &staged).is_ok());
  auto* host = static_cast<unsigned char*>(staged.mpi_pointer());
  host[3] = 0x01;  // MPI writes one byte of the type map
  ASSERT_TRUE(staged.copy_back_all().is_ok());
  std::vector<unsigned char> expected = before;
  expected[3] = 0x01;
  EXPECT_EQ(device_contents(), expected);
}

TEST_F(StagedBufferTest, SpansOutsideTheAllocationAreBadBuffers) {
  StagedBuffer staged;
  Status status = read(device_, ByteSpan{0, kBytes + 1}, &staged);
  EXPECT_EQ(status.code(), StatusCode::bad_buffer);
  status = read(device_ + 8, ByteSpan{-16, 8}, &staged);
  EXPECT_EQ(status.code(), StatusCode::bad_buffer);
}

TEST_F(StagedBufferTest, EmptySpansNeedNoMemory) {
  StagedBuffer staged;
  ASSERT_TRUE(read(device_, ByteSpan{}, &staged).is_ok());
  EXPECT_NE(staged.mpi_pointer(), nullptr);
  EXPECT_NE(staged.mpi_pointer(), static_cast<void*>(device_));
  EXPECT_TRUE(staged.copy_back_all().is_ok());
}

TEST_F(StagedBufferTest, BlocksReturnToThePool) {
  const std::size_t before = staging_pool().blocks_created();
  for (int i = 0; i < 5; ++i) {
    StagedBuffer staged;
    ASSERT_TRUE(read(device_, ByteSpan{0, 2000}, &staged).is_ok());
  }
  EXPECT_LE(staging_pool().blocks_created(), before + 1);
}

}  // namespace
}  // namespace cumpi::memory
