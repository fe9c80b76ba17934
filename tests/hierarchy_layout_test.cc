// The layout of a hierarchical collective's steps (coll/hierarchy.h): each
// rank's place on its node and its node's place among the leaders, from the
// node map alone.
#include "coll/hierarchy.h"

#include <gtest/gtest.h>

#include <vector>

namespace cumpi::coll {
namespace {

TEST(HierarchyLayout, RanksMappedByNodeAlternate) {
  // Open MPI's --map-by node over two nodes named by their lowest world rank.
  const HierarchyLayout layout = layout_of({0, 1, 0, 1});
  EXPECT_EQ(layout.node_index, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(layout.local_rank, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(layout.node_sizes, (std::vector<int>{2, 2}));
}

TEST(HierarchyLayout, UnevenNodesNumberedByTheirLowestRank) {
  // A communicator whose rank 0 lies on the node named 5: nodes are
  // numbered by where their first rank comes, not by their names.
  const HierarchyLayout layout = layout_of({5, 5, 2, 5, 9});
  EXPECT_EQ(layout.node_index, (std::vector<int>{0, 0, 1, 0, 2}));
  EXPECT_EQ(layout.local_rank, (std::vector<int>{0, 1, 0, 2, 0}));
  EXPECT_EQ(layout.node_sizes, (std::vector<int>{3, 1, 1}));
}

TEST(HierarchyLayout, OneNode) {
  const HierarchyLayout layout = layout_of({3, 3, 3});
  EXPECT_EQ(layout.node_index, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(layout.local_rank, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(layout.node_sizes, (std::vector<int>{3}));
}

TEST(HierarchyLayout, EqualBlocksOnlyWhereNodesAreConsecutiveAndAlike) {
  EXPECT_TRUE(layout_of({0, 0, 2, 2}).equal_blocks);
  EXPECT_TRUE(layout_of({7, 7, 7, 1, 1, 1}).equal_blocks);
  EXPECT_TRUE(layout_of({3, 3, 3}).equal_blocks);
  EXPECT_FALSE(layout_of({0, 1, 0, 1}).equal_blocks);     // mapped by node
  EXPECT_FALSE(layout_of({0, 0, 0, 3}).equal_blocks);     // uneven
  EXPECT_FALSE(layout_of({0, 0, 2, 2, 0, 0}).equal_blocks);  // a node's ranks split
  EXPECT_FALSE(layout_of({}).equal_blocks);
}

TEST(HierarchyLayout, OffUntilEveryRankAsked) {
  // Set at MPI_Init from every rank's CUMPI_COLL_HIERARCHY; never here.
  EXPECT_FALSE(hierarchy_on());
}

}  // namespace
}  // namespace cumpi::coll
