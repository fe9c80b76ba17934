#include <gtest/gtest.h>

#include "transport/staged/pipeline.h"

namespace cumpi::transport {
namespace {

TEST(PipelineShape, ChunksCoverTheMessageExactly) {
  const PipelineShape shape{10u << 20, 4u << 20, 4};
  ASSERT_EQ(shape.chunks(), 3u);
  EXPECT_EQ(shape.length_of(0), 4u << 20);
  EXPECT_EQ(shape.length_of(1), 4u << 20);
  EXPECT_EQ(shape.length_of(2), 2u << 20);
}

TEST(PipelineShape, AMessageOfWholeChunksHasNoEmptyTail) {
  const PipelineShape shape{8u << 20, 4u << 20, 2};
  ASSERT_EQ(shape.chunks(), 2u);
  EXPECT_EQ(shape.length_of(1), 4u << 20);
}

TEST(PipelineShape, ASmallMessageIsOneShortChunk) {
  const PipelineShape shape{300, 2u << 20, 4};
  ASSERT_EQ(shape.chunks(), 1u);
  EXPECT_EQ(shape.length_of(0), 300u);
}

}  // namespace
}  // namespace cumpi::transport
