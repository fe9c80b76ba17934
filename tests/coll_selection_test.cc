// The choice of a collective's algorithm: configured order, declines with
// their reasons, and algorithms that need every rank on a device passed
// over while ranks with host buffers bypass the engine.
#include "coll/selection.h"

#include <gtest/gtest.h>

#include "coll/staged_algorithm.h"
#include "protocol/node_map.h"

namespace cumpi::coll {
namespace {

// Takes calls of at least `from` elements, on communicators of one node.
class FakeAlgorithm final : public Algorithm {
 public:
  FakeAlgorithm(const char* name, int from, bool beside_host) : name_(name), from_(from), beside_host_(beside_host) {}
  const char* name() const override { return name_; }
  bool runs_beside_host_ranks() const override { return beside_host_; }
  bool takes(const protocol::CommContext& context, const CollectiveCall& call, std::string* why_not) const override {
    if (!context.all_on_one_node()) {
      *why_not = "ranks on several nodes";
      return false;
    }
    if (call.send_count < from_) {
      *why_not = "fewer than " + std::to_string(from_) + " elements";
      return false;
    }
    return true;
  }
  Status run(const CollectiveCall&) override { return Status::ok(); }

 private:
  const char* name_;
  int from_;
  bool beside_host_;
};

class CollSelectionTest : public ::testing::Test {
 protected:
  // Contexts read the node map when made: after SetUp.
  void SetUp() override { protocol::set_node_map({0, 0, 2, 2}, 0); }
  void TearDown() override { protocol::forget_node_map(); }

  static CollectiveCall allreduce_of(int count) {
    CollectiveCall call;
    call.send_count = count;
    return call;
  }
  static protocol::CommContext one_node() { return protocol::CommContext({0, 1}, {0, 1}, false); }
  static protocol::CommContext two_nodes() { return protocol::CommContext({0, 1, 2, 3}, {0, 1, 2, 3}, false); }
};

TEST_F(CollSelectionTest, TakesTheFirstAlgorithmThatTakesTheCall) {
  FakeAlgorithm large("large", 1000, true);
  FakeAlgorithm small("small", 1, true);
  Selection selection;
  selection.use({&large, &small, &staged_algorithm()});
  std::string reasons;
  EXPECT_EQ(&selection.choose(one_node(), allreduce_of(5000), &reasons), &large);
  EXPECT_EQ(reasons, "");
  EXPECT_EQ(&selection.choose(one_node(), allreduce_of(10), &reasons), &small);
  EXPECT_EQ(reasons, "large: fewer than 1000 elements");
}

TEST_F(CollSelectionTest, FallsToTheStagedAlgorithmWithEveryReason) {
  FakeAlgorithm large("large", 1000, true);
  FakeAlgorithm small("small", 1, true);
  Selection selection;
  selection.use({&large, &small, &staged_algorithm()});
  std::string reasons;
  EXPECT_EQ(&selection.choose(two_nodes(), allreduce_of(5000), &reasons), &staged_algorithm());
  EXPECT_EQ(reasons, "large: ranks on several nodes; small: ranks on several nodes");
}

TEST_F(CollSelectionTest, PassesOverAlgorithmsThatNeedEveryRankOnADevice) {
  FakeAlgorithm gpu_only("gpu_only", 1, false);
  Selection selection;
  selection.use({&gpu_only, &staged_algorithm()});
  std::string reasons;
  EXPECT_EQ(&selection.choose(one_node(), allreduce_of(5000), &reasons), &staged_algorithm());
  EXPECT_EQ(reasons, "gpu_only: needs every rank's buffers on a device");
}

TEST_F(CollSelectionTest, TheConfigurationAlwaysEndsInTheStagedAlgorithm) {
  Selection selection;
  selection.configure({});
  ASSERT_EQ(selection.ordered().size(), 1u);
  EXPECT_EQ(selection.ordered().back(), &staged_algorithm());
  selection.configure({"staged"});
  EXPECT_EQ(selection.ordered().size(), 1u);
}

}  // namespace
}  // namespace cumpi::coll
