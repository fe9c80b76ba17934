#include <gtest/gtest.h>

#include "memory/datatype_layout.h"
#include "memory/datatype_order.h"

namespace cumpi::memory {
namespace {

const TypeLayout kInt{4, 4, 0, 4, true};
// MPI_Type_vector(3 blocks, 2 ints, stride 4): data 2 ints, hole 2 ints, ...
const TypeLayout kVector{24, 40, 0, 40};
// A resized type whose data starts 8 bytes in and whose extent is shorter.
const TypeLayout kShifted{4, 16, 8, 4};

TEST(DatatypeLayout, ContiguousSpanIsCountTimesSize) {
  const ByteSpan span = span_of(kInt, 10);
  EXPECT_EQ(span.offset, 0);
  EXPECT_EQ(span.bytes, 40u);
  EXPECT_TRUE(fills_span(kInt, 10, span));
}

TEST(DatatypeLayout, ZeroCountTouchesNothing) {
  EXPECT_TRUE(span_of(kInt, 0).empty());
  EXPECT_TRUE(span_of(kVector, 0).empty());
}

TEST(DatatypeLayout, TrueLowerBoundShiftsTheSpan) {
  const ByteSpan span = span_of(kShifted, 3);
  EXPECT_EQ(span.offset, 8);
  EXPECT_EQ(span.bytes, 2u * 16 + 4);  // last element at 32, 4 bytes
  EXPECT_FALSE(fills_span(kShifted, 3, span));
}

TEST(DatatypeLayout, VectorsHaveHoles) {
  const ByteSpan span = span_of(kVector, 2);
  EXPECT_EQ(span.offset, 0);
  EXPECT_EQ(span.bytes, 80u);
  EXPECT_FALSE(fills_span(kVector, 2, span));
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
  EXPECT_FALSE(fills_span(kInt, 6, span));
}

TEST(DatatypeLayout, AdjacentBlocksAreDense) {
  const int counts[] = {2, 3};
  const int displs[] = {0, 2};
  const ByteSpan span = span_of_blocks(kInt, 2, counts, displs);
  EXPECT_EQ(span.bytes, 20u);
  EXPECT_TRUE(fills_span(kInt, 5, span));
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

// A struct {int at 4, int at 0}: no holes, but MPI packs the int at 4 first.
const TypeLayout kSwapped{8, 8, 0, 8, false};

TEST(DatatypeLayout, ASpanWithoutHolesNeedNotBeInOrder) {
  const ByteSpan span = span_of(kSwapped, 2);
  EXPECT_TRUE(fills_span(kSwapped, 2, span));
  EXPECT_FALSE(is_contiguous(kSwapped, 2, span));
}

TEST(DatatypeLayout, ContiguousNeedsElementsForwardsAndBackToBack) {
  EXPECT_TRUE(is_contiguous(kInt, 10, span_of(kInt, 10)));
  const TypeLayout backwards{4, -4, 0, 4, true};
  EXPECT_TRUE(fills_span(backwards, 3, span_of(backwards, 3)));
  EXPECT_FALSE(is_contiguous(backwards, 3, span_of(backwards, 3)));
  EXPECT_TRUE(is_contiguous(backwards, 1, span_of(backwards, 1)));
  const TypeLayout spread{4, 8, 0, 4, true};  // resized to a larger extent
  EXPECT_TRUE(is_contiguous(spread, 1, span_of(spread, 1)));
  EXPECT_FALSE(is_contiguous(spread, 2, span_of(spread, 2)));
  EXPECT_TRUE(is_contiguous(kSwapped, 0, span_of(kSwapped, 0)));
}

using type_map::concat;
using type_map::repeat;
using Kind = TypeMapShape::Kind;

TEST(TypeMapShape, RunsThatFollowEachOtherJoin) {
  const TypeMapShape joined = concat(TypeMapShape::run_of(0, 4), TypeMapShape::run_of(4, 8));
  EXPECT_EQ(joined.kind, Kind::run);
  EXPECT_EQ(joined.first, 0);
  EXPECT_EQ(joined.bytes, 12);
  EXPECT_EQ(concat(TypeMapShape{}, joined).bytes, 12);
  EXPECT_EQ(concat(joined, TypeMapShape{}).bytes, 12);
}

TEST(TypeMapShape, RunsOutOfOrderOrApartScatter) {
  EXPECT_EQ(concat(TypeMapShape::run_of(4, 4), TypeMapShape::run_of(0, 4)).kind, Kind::scattered);
  EXPECT_EQ(concat(TypeMapShape::run_of(0, 4), TypeMapShape::run_of(8, 4)).kind, Kind::scattered);
  EXPECT_EQ(concat(TypeMapShape::scattered(), TypeMapShape{}).kind, Kind::scattered);
}

TEST(TypeMapShape, RepeatsJoinOnlyAtTheirOwnLength) {
  const TypeMapShape element = TypeMapShape::run_of(0, 4);
  const TypeMapShape packed = repeat(element, 5, 4, 16);
  EXPECT_EQ(packed.kind, Kind::run);
  EXPECT_EQ(packed.first, 16);
  EXPECT_EQ(packed.bytes, 20);
  EXPECT_EQ(repeat(element, 5, 8, 0).kind, Kind::scattered);
  EXPECT_EQ(repeat(element, 5, -4, 0).kind, Kind::scattered);
  EXPECT_EQ(repeat(element, 1, 100, 8).first, 8);  // one copy: the stride is irrelevant
  EXPECT_EQ(repeat(element, 0, 4, 0).kind, Kind::empty);
  EXPECT_EQ(repeat(TypeMapShape::scattered(), 1, 4, 0).kind, Kind::scattered);
}

}  // namespace
}  // namespace cumpi::memory
