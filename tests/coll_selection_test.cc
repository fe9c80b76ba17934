// The choice of a collective's algorithm: configured order, declines with
// their reasons, algorithms that need every rank on a device passed over
// without an agreement board, and taken on a board (threads as ranks) only
// when every rank offered them.
#include "coll/selection.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "coll/agreement.h"
#include "coll/staged_algorithm.h"
#include "protocol/node_map.h"
#include "runtime/config.h"

namespace cumpi::coll {
namespace {

// Takes calls of at least `from` elements, on communicators of one node.
class FakeAlgorithm final : public Algorithm {
 public:
  FakeAlgorithm(const char* name, int from, bool beside_host) : name_(name), from_(from), beside_host_(beside_host) {}
  // For algorithms that need agreement: what offer() says.
  bool offers = true;
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
  bool offer(const CollectiveCall&, void*, std::string* why_not) override {
    if (!offers) *why_not = "this rank's buffers are not on a device";
    return offers;
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

  static CollectiveCall* allreduce_of(int count) {
    static thread_local CollectiveCall call;
    call = CollectiveCall{};
    call.send_count = count;
    return &call;
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
  EXPECT_EQ(&selection.choose(one_node(), allreduce_of(5000), nullptr, &reasons), &large);
  EXPECT_EQ(reasons, "");
  EXPECT_EQ(&selection.choose(one_node(), allreduce_of(10), nullptr, &reasons), &small);
  EXPECT_EQ(reasons, "large: fewer than 1000 elements");
}

TEST_F(CollSelectionTest, FallsToTheStagedAlgorithmWithEveryReason) {
  FakeAlgorithm large("large", 1000, true);
  FakeAlgorithm small("small", 1, true);
  Selection selection;
  selection.use({&large, &small, &staged_algorithm()});
  std::string reasons;
  EXPECT_EQ(&selection.choose(two_nodes(), allreduce_of(5000), nullptr, &reasons), &staged_algorithm());
  EXPECT_EQ(reasons, "large: ranks on several nodes; small: ranks on several nodes");
}

TEST_F(CollSelectionTest, PassesOverAlgorithmsThatNeedEveryRankOnADevice) {
  FakeAlgorithm gpu_only("gpu_only", 1, false);
  Selection selection;
  selection.use({&gpu_only, &staged_algorithm()});
  std::string reasons;
  EXPECT_EQ(&selection.choose(one_node(), allreduce_of(5000), nullptr, &reasons), &staged_algorithm());
  EXPECT_EQ(reasons.rfind("gpu_only: needs every rank's buffers on a device, and this communicator has no agreement "
                          "board",
                          0),
            0u);
}

// Two ranks on one board, each choosing on its own thread.
// Nonblocking: the calls carry a request.
std::vector<const Algorithm*> choices_of_two(const Selection* const (&selections)[2],
                                             const protocol::CommContext& context, int calls,
                                             bool nonblocking = false) {
  std::vector<unsigned char> memory(AgreementBoard::bytes_for(2));
  std::unique_ptr<AgreementBoard> boards[2] = {AgreementBoard::attach(memory.data(), 0, 2),
                                               AgreementBoard::attach(memory.data(), 1, 2)};
  std::vector<const Algorithm*> chosen(static_cast<std::size_t>(2 * calls));
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      for (int call = 0; call < calls; ++call) {
        CollectiveCall one;
        one.send_count = 5000;
        MPI_Request request = MPI_REQUEST_NULL;
        one.request = nonblocking ? &request : nullptr;
        std::string reasons;
        chosen[static_cast<std::size_t>(2 * call + rank)] =
            &selections[rank]->choose(context, &one, boards[rank].get(), &reasons);
        // An agreed algorithm's first step holds every rank in the call
        // (coll/algorithm.h): the fake one runs that step only.
        if (!chosen[static_cast<std::size_t>(2 * call + rank)]->runs_beside_host_ranks()) {
          boards[rank]->arrive(one.agreed_call, 1, true);
          EXPECT_TRUE(boards[rank]->wait_all(one.agreed_call, 1, [] {}));
        }
        EXPECT_EQ(one.board, boards[rank].get());
        EXPECT_EQ(one.agreed_call, static_cast<std::uint64_t>(call + 1));
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return chosen;
}

TEST_F(CollSelectionTest, AnAlgorithmNeedingAgreementRunsWhereEveryRankOffersIt) {
  FakeAlgorithm gpu_only("gpu_only", 1, false);
  Selection selection;
  selection.use({&gpu_only, &staged_algorithm()});
  const Selection* const both[2] = {&selection, &selection};
  for (const Algorithm* chosen : choices_of_two(both, one_node(), 50)) EXPECT_EQ(chosen, &gpu_only);
}

// CUMPI_COLL_START_WAIT set for one test.
class StartWait {
 public:
  explicit StartWait(const char* microseconds) {
    setenv("CUMPI_COLL_START_WAIT", microseconds, 1);
    load_config(false);
  }
  ~StartWait() {
    unsetenv("CUMPI_COLL_START_WAIT");
    load_config(false);
  }
};

TEST_F(CollSelectionTest, NonblockingCallsStartedInTimeRunOnTheAgreedAlgorithm) {
  const StartWait wait("60000000");  // a minute: never runs out here
  FakeAlgorithm gpu_only("gpu_only", 1, false);
  Selection selection;
  selection.use({&gpu_only, &staged_algorithm()});
  const Selection* const both[2] = {&selection, &selection};
  for (const Algorithm* chosen : choices_of_two(both, one_node(), 300, true)) EXPECT_EQ(chosen, &gpu_only);
}

TEST_F(CollSelectionTest, NonblockingCallsWithoutAStartWaitAreStaged) {
  const StartWait wait("0");
  FakeAlgorithm gpu_only("gpu_only", 1, false);
  Selection selection;
  selection.use({&gpu_only, &staged_algorithm()});
  const Selection* const both[2] = {&selection, &selection};
  for (const Algorithm* chosen : choices_of_two(both, one_node(), 20, true)) EXPECT_EQ(chosen, &staged_algorithm());
}

TEST_F(CollSelectionTest, OneRankWithoutTheOfferSendsEveryRankToTheStagedAlgorithm) {
  FakeAlgorithm offering("gpu_only", 1, false);
  FakeAlgorithm declining("gpu_only", 1, false);
  declining.offers = false;
  Selection first;
  first.use({&offering, &staged_algorithm()});
  Selection second;
  second.use({&declining, &staged_algorithm()});
  const Selection* const both[2] = {&first, &second};
  for (const Algorithm* chosen : choices_of_two(both, one_node(), 50)) EXPECT_EQ(chosen, &staged_algorithm());
}

// Needs agreement; offers `marker` in its region of the payload, and after
// the offers accepts only where `accepting` and every rank's region holds
// `base` or `base + 1` (rank 0's and rank 1's markers: it sees its own
// region of every rank's payload).
class RegionAlgorithm final : public Algorithm {
 public:
  RegionAlgorithm(const char* name, std::size_t bytes, unsigned char base, int rank, bool accepting)
      : name_(name),
        bytes_(bytes),
        base_(base),
        marker_(static_cast<unsigned char>(base + rank)),
        accepting_(accepting) {}
  const char* name() const override { return name_; }
  bool runs_beside_host_ranks() const override { return false; }
  bool takes(const protocol::CommContext&, const CollectiveCall&, std::string*) const override { return true; }
  std::size_t offer_bytes() const override { return bytes_; }
  bool offer(const CollectiveCall&, void* payload, std::string*) override {
    std::memset(payload, marker_, bytes_);
    return true;
  }
  bool accepts(const CollectiveCall& call, std::string* why_not) const override {
    for (int r = 0; r < call.board->size(); ++r) {
      const auto* region = static_cast<const unsigned char*>(call.board->payload_of(r)) + call.payload_offset;
      for (std::size_t i = 0; i < bytes_; ++i) {
        if (region[i] != base_ && region[i] != static_cast<unsigned char>(base_ + 1)) {
          *why_not = "another algorithm's bytes in its region";
          return false;
        }
      }
    }
    if (!accepting_) *why_not = "the offers do not allow it";
    return accepting_;
  }
  Status run(const CollectiveCall&) override { return Status::ok(); }

 private:
  const char* name_;
  std::size_t bytes_;
  unsigned char base_;
  unsigned char marker_;
  bool accepting_;
};

TEST_F(CollSelectionTest, EveryRankTakesTheFirstAlgorithmTheOffersTogetherAllow) {
  // Rank 0 offers markers 'a' and 'x', rank 1 'b' and 'y': each algorithm
  // must read its own region of both payloads, and the first declines after
  // the offers.
  RegionAlgorithm refusing[2] = {{"refusing", 24, 'a', 0, false}, {"refusing", 24, 'a', 1, false}};
  RegionAlgorithm accepting[2] = {{"accepting", 40, 'x', 0, true}, {"accepting", 40, 'x', 1, true}};
  Selection selections[2];
  for (int rank = 0; rank < 2; ++rank) selections[rank].use({&refusing[rank], &accepting[rank], &staged_algorithm()});
  const Selection* const both[2] = {&selections[0], &selections[1]};
  for (const Algorithm* chosen : choices_of_two(both, one_node(), 20)) EXPECT_STREQ(chosen->name(), "accepting");
}

TEST_F(CollSelectionTest, TheConfigurationAlwaysEndsInTheStagedAlgorithm) {
  Selection selection;
  selection.configure({});
  ASSERT_EQ(selection.ordered().size(), 1u);
  EXPECT_EQ(selection.ordered().back(), &staged_algorithm());
  selection.configure({"staged"});
  EXPECT_EQ(selection.ordered().size(), 1u);
  selection.configure({"ipc"});
  ASSERT_EQ(selection.ordered().size(), 2u);
  EXPECT_STREQ(selection.ordered().front()->name(), "ipc");
  selection.configure({"nccl", "ipc"});
  ASSERT_EQ(selection.ordered().size(), 3u);
  EXPECT_STREQ(selection.ordered().front()->name(), "nccl");
  EXPECT_TRUE(host_calls_announce());
  selection.configure({"staged"});
  EXPECT_FALSE(host_calls_announce());
}

}  // namespace
}  // namespace cumpi::coll
