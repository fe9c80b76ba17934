// The facts of a communicator context, computed from its members' world
// ranks and the job's node map alike on every rank, and the algorithm state
// it holds.
#include "protocol/comm_context.h"

#include <gtest/gtest.h>

#include "protocol/node_map.h"

namespace cumpi::protocol {
namespace {

// Four ranks on two nodes: 0 and 1 on node 0, 2 and 3 on node 2.
class CommContextTest : public ::testing::Test {
 protected:
  void SetUp() override { set_node_map({0, 0, 2, 2}, 0); }
  void TearDown() override { forget_node_map(); }
};

TEST_F(CommContextTest, TranslatesRanksToWorldRanksAndRefusesOthers) {
  const CommContext reversed({3, 2, 1, 0}, {3, 2, 1, 0}, false);
  EXPECT_EQ(reversed.size(), 4);
  EXPECT_EQ(reversed.world_rank(0), 3);
  EXPECT_EQ(reversed.world_rank(3), 0);
  EXPECT_EQ(reversed.world_rank(-1), -1);
  EXPECT_EQ(reversed.world_rank(4), -1);
}

TEST_F(CommContextTest, CountsTheNodesOfBothGroups) {
  EXPECT_TRUE(CommContext({0, 1}, {0, 1}, false).all_on_one_node());
  EXPECT_TRUE(CommContext({2, 3}, {2, 3}, false).all_on_one_node());
  EXPECT_EQ(CommContext({1, 2}, {1, 2}, false).nodes(), 2);
  // An inter-communicator between the nodes spans both, though each group
  // lies on one.
  const CommContext inter({2, 3}, {0, 1}, true);
  EXPECT_TRUE(inter.inter());
  EXPECT_EQ(inter.nodes(), 2);
  EXPECT_EQ(inter.world_rank(1), 3);  // ranks address the remote group
}

TEST_F(CommContextTest, ARankOutsideTheJobIsAnotherNode) {
  EXPECT_EQ(CommContext({0, -1}, {0}, true).nodes(), 2);
}

class CountedState final : public CommState {
 public:
  explicit CountedState(int* alive) : alive_(alive) { ++*alive_; }
  ~CountedState() override { --*alive_; }

 private:
  int* alive_;
};

TEST_F(CommContextTest, HoldsEachAlgorithmsStateUntilReleased) {
  int alive = 0;
  {
    CommContext context({0, 1}, {0, 1}, false);
    EXPECT_EQ(context.state("ipc"), nullptr);
    context.set_state("ipc", std::make_unique<CountedState>(&alive));
    context.set_state("nccl", std::make_unique<CountedState>(&alive));
    EXPECT_NE(context.state("ipc"), nullptr);
    EXPECT_EQ(alive, 2);
    context.set_state("ipc", std::make_unique<CountedState>(&alive));  // replaces, the old one goes
    EXPECT_EQ(alive, 2);
    context.release_states();
    EXPECT_EQ(alive, 0);
    EXPECT_EQ(context.state("nccl"), nullptr);
    context.set_state("nccl", std::make_unique<CountedState>(&alive));
  }
  EXPECT_EQ(alive, 0);  // and with the context
}

}  // namespace
}  // namespace cumpi::protocol
