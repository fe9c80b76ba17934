// The agreement board's nonblocking decisions (threads as ranks): the
// same answer on every rank whether the offers came in time or not, and no
// decision word reused while a rank may still read it.
#include "coll/agreement_board.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace cumpi::coll {
namespace {

constexpr double kLongWait = 60.0;  // seconds: never runs out in these tests

class TwoRankBoard : public ::testing::Test {
 protected:
  std::vector<unsigned char> memory = std::vector<unsigned char>(AgreementBoard::bytes_for(2));
  std::unique_ptr<AgreementBoard> boards[2] = {AgreementBoard::attach(memory.data(), 0, 2),
                                               AgreementBoard::attach(memory.data(), 1, 2)};

  // Announces and agrees a nonblocking call on `rank`'s board.
  unsigned start(int rank, unsigned offers, double seconds) {
    const std::uint64_t call = boards[rank]->announce(offers);
    return boards[rank]->agree_within(call, offers, seconds, [] { std::this_thread::yield(); });
  }
};

TEST_F(TwoRankBoard, RanksStartingTogetherAgreeOnTheOffersBothMade) {
  for (int call = 0; call < 600; ++call) {  // past the ring's length: words are reused
    unsigned agreed[2] = {};
    std::thread second([&] { agreed[1] = start(1, 0b0110, kLongWait); });
    agreed[0] = start(0, 0b0011, kLongWait);
    second.join();
    ASSERT_EQ(agreed[0], 0b0010u) << "call " << call;
    ASSERT_EQ(agreed[1], 0b0010u) << "call " << call;
  }
}

TEST_F(TwoRankBoard, ARankWhoseWaitRanOutSendsBothRanksToNoOffer) {
  EXPECT_EQ(start(0, 0b1, 0.0), 0u);
  // The late rank finds the call decided, whatever it offers and waits.
  EXPECT_EQ(start(1, 0b1, kLongWait), 0u);
  // The next call is decided afresh.
  unsigned late_rank = 1;
  std::thread second([&] { late_rank = start(1, 0b1, kLongWait); });
  EXPECT_EQ(start(0, 0b1, kLongWait), 0b1u);
  second.join();
  EXPECT_EQ(late_rank, 0b1u);
}

TEST_F(TwoRankBoard, TimeoutsRacingOffersStillGiveOneAnswer) {
  // Short waits: some calls decide on the offers, some run out; both ranks
  // must read the same every time.
  constexpr int kCalls = 2000;
  std::vector<unsigned> answers[2] = {std::vector<unsigned>(kCalls), std::vector<unsigned>(kCalls)};
  std::thread second([&] {
    for (int call = 0; call < kCalls; ++call) {
      answers[1][static_cast<std::size_t>(call)] = start(1, 0b1, 2e-6);
      // Both ranks must announce past a word before it is used again.
      while (!boards[1]->may_decide_next()) std::this_thread::yield();
    }
  });
  for (int call = 0; call < kCalls; ++call) {
    answers[0][static_cast<std::size_t>(call)] = start(0, 0b1, 2e-6);
    while (!boards[0]->may_decide_next()) std::this_thread::yield();
  }
  second.join();
  EXPECT_EQ(answers[0], answers[1]);
}

TEST_F(TwoRankBoard, ARankOfferingNothingEndsTheOthersWaitAtOnce) {
  std::thread second([&] { EXPECT_EQ(start(1, 0, kLongWait), 0u); });
  const auto begun = std::chrono::steady_clock::now();
  EXPECT_EQ(start(0, 0b1, kLongWait), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(30));
  second.join();
}

TEST_F(TwoRankBoard, ARankAFullRingAheadMayNotUseAWordTheLaggardMayStillRead) {
  for (std::uint64_t call = 1; call <= AgreementBoard::kDecisionRing; ++call) {
    EXPECT_TRUE(boards[0]->may_decide_next()) << "call " << call;
    boards[0]->announce(0);
  }
  // Call kDecisionRing + 1 would reuse call 1's word, which rank 1 has not
  // even announced.
  EXPECT_FALSE(boards[0]->may_decide_next());
  boards[1]->announce(0);
  EXPECT_FALSE(boards[0]->may_decide_next());  // rank 1 may be in call 1 still
  boards[1]->announce(0);
  EXPECT_TRUE(boards[0]->may_decide_next());  // it left call 1
}

}  // namespace
}  // namespace cumpi::coll
