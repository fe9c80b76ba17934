#include <gtest/gtest.h>

#include "memory/datatype_layout.h"

namespace cumpi::memory {
namespace {

const TypeLayout kInt{4, 4, 0, 4};
// MPI_Type_vector(3 blocks, 2 ints, stride 4): data 2 ints, hole 2 ints, ...
const TypeLayout kVector{24, 40, 0, 40};
// A resized type whose data starts 8 bytes in and whose extent is shorter.
const TypeLayout kShifted{4, 16, 8, 4};

TEST(DatatypeLayout, ContiguousSpanIsCountTimesSize) {
  const ByteSpan span = span_of(kInt, 10);
  EXPECT_EQ(span.offset, 0);
  EXPECT_EQ(span.bytes, 40u);
  EXPECT_TRUE(is_dense(kInt, 10, span));
}

TEST(DatatypeLayout, ZeroCountTouchesNothing) {
  EXPECT_TRUE(span_of(kInt, 0).empty());
  EXPECT_TRUE(span_of(kVector, 0).empty());
}

TEST(DatatypeLayout, TrueLowerBoundShiftsTheSpan) {
  const ByteSpan span = span_of(kShifted, 3);
  EXPECT_EQ(span.offset, 8);
  EXPECT_EQ(span.bytes, 2u * 16 + 4);  // last element at 32, 4 bytes
  EXPECT_FALSE(is_dense(kShifted, 3, span));
}

TEST(DatatypeLayout, VectorsHaveHoles) {
  const ByteSpan span = span_of(kVector, 2);
  EXPECT_EQ(span.offset, 0);
  EXPECT_EQ(span.bytes, 80u);
  EXPECT_FALSE(is_dense(kVector, 2, span));
}

TEST(DatatypeLayout, NegativeExtentGrowsDownwards) {
  const TypeLayout backwards{4, -8, 0, 4};
  const ByteSpan span = span_of(backwards, 3);
  EXPECT_EQ(span.offset, -16);
  EXPECT_EQ(span.bytes, 20u);
}

TEST(DatatypeLayout, BlocksAtDisplacementsCoverFirstToLast) {
  const int counts[] = {1, 2, 3};
  const int displs[] = {2, 5, 9};  // in extents of int
  const ByteSpan span = span_of_blocks(kInt, 3, counts, displs);
  EXPECT_EQ(span.offset, 8);
  EXPECT_EQ(span.bytes, (12u - 2u) * 4);
  EXPECT_FALSE(is_dense(kInt, 6, span));
}

TEST(DatatypeLayout, AdjacentBlocksAreDense) {
  const int counts[] = {2, 3};
  const int displs[] = {0, 2};
  const ByteSpan span = span_of_blocks(kInt, 2, counts, displs);
  EXPECT_EQ(span.bytes, 20u);
  EXPECT_TRUE(is_dense(kInt, 5, span));
}

TEST(DatatypeLayout, EmptyBlocksDoNotWidenTheSpan) {
  const int counts[] = {0, 2, 0};
  const int displs[] = {100, 4, -50};
  const ByteSpan span = span_of_blocks(kInt, 3, counts, displs);
  EXPECT_EQ(span.offset, 16);
  EXPECT_EQ(span.bytes, 8u);
}

TEST(DatatypeLayout, UniformBlocksAreOneRun) {
  const ByteSpan span = span_of_uniform_blocks(kInt, 4, 3);
  EXPECT_EQ(span.bytes, 48u);
  EXPECT_TRUE(span_of_uniform_blocks(kInt, 4, 0).empty());
}

TEST(DatatypeLayout, UnionOfSpans) {
  EXPECT_EQ(span_union(ByteSpan{10, 5}, ByteSpan{0, 3}).bytes, 15u);
  EXPECT_EQ(span_union(ByteSpan{}, ByteSpan{4, 2}).offset, 4);
}

}  // namespace
}  // namespace cumpi::memory
