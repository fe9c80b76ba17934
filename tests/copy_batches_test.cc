#include "memory/copy_batches.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace cumpi::memory {
namespace {

// Records each submission; the "event" is the submission's number, plus one.
struct Submissions {
  std::vector<std::pair<void*, std::size_t>> batches;  // context, copies
  Status next_status;
  CopyBatches batches_under_test{[this](void* context, const std::vector<QueuedCopy>& copies, void** event) {
    batches.emplace_back(context, copies.size());
    *event = reinterpret_cast<void*>(batches.size());
    return next_status;
  }};
};

int context_a;
int context_b;
char bytes[4];

TEST(CopyBatches, OneSubmissionPerContextAtFlush) {
  Submissions s;
  CopyTicket first, second, third;
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &first);
  s.batches_under_test.queue(bytes + 1, bytes + 2, 1, &context_a, &second);
  s.batches_under_test.queue(bytes + 2, bytes + 3, 1, &context_b, &third);
  EXPECT_TRUE(s.batches.empty());
  s.batches_under_test.flush();
  ASSERT_EQ(s.batches.size(), 2u);
  EXPECT_EQ(s.batches[0], std::make_pair(static_cast<void*>(&context_a), std::size_t{2}));
  EXPECT_EQ(s.batches[1], std::make_pair(static_cast<void*>(&context_b), std::size_t{1}));
  void* event = nullptr;
  EXPECT_TRUE(s.batches_under_test.event_of(first, &event).is_ok());
  EXPECT_EQ(event, reinterpret_cast<void*>(1));
  // The batch's event goes back with its last ticket only.
  EXPECT_EQ(s.batches_under_test.release(&first), nullptr);
  EXPECT_EQ(s.batches_under_test.release(&second), reinterpret_cast<void*>(1));
  EXPECT_EQ(s.batches_under_test.release(&third), reinterpret_cast<void*>(2));
  EXPECT_EQ(first.batch, nullptr);
  s.batches_under_test.flush();
  EXPECT_EQ(s.batches.size(), 2u) << "nothing left to submit";
}

TEST(CopyBatches, AskingForAnOpenBatchsEventSubmitsIt) {
  Submissions s;
  CopyTicket ticket;
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &ticket);
  void* event = nullptr;
  EXPECT_TRUE(s.batches_under_test.event_of(ticket, &event).is_ok());
  EXPECT_EQ(s.batches.size(), 1u);
  CopyTicket later;
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &later);
  s.batches_under_test.flush();
  EXPECT_EQ(s.batches.size(), 2u) << "a copy queued after submission goes in a new batch";
  s.batches_under_test.release(&ticket);
  s.batches_under_test.release(&later);
}

TEST(CopyBatches, ASubmissionErrorReachesEveryTicketOfItsBatch) {
  Submissions s;
  s.next_status = Status::error(StatusCode::cuda_error, "cuMemcpyBatchAsync failed: injected");
  CopyTicket first, second;
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &first);
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &second);
  void* event = nullptr;
  EXPECT_EQ(s.batches_under_test.event_of(first, &event).code(), StatusCode::cuda_error);
  EXPECT_EQ(s.batches_under_test.event_of(second, &event).code(), StatusCode::cuda_error);
  s.batches_under_test.release(&first);
  s.batches_under_test.release(&second);
}

TEST(CopyBatches, OnceOneTicketSawTheBatchCompleteTheOthersAreNotAskedToQuery) {
  Submissions s;
  CopyTicket first, second;
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &first);
  s.batches_under_test.queue(bytes, bytes + 1, 1, &context_a, &second);
  void* event = nullptr;
  ASSERT_TRUE(s.batches_under_test.event_of(first, &event).is_ok());
  EXPECT_NE(event, nullptr);
  s.batches_under_test.mark_complete(first);
  EXPECT_EQ(s.batches_under_test.release(&first), nullptr);
  ASSERT_TRUE(s.batches_under_test.event_of(second, &event).is_ok());
  EXPECT_EQ(event, nullptr);
  EXPECT_EQ(s.batches_under_test.release(&second), reinterpret_cast<void*>(1)) << "the event still goes back";
}

}  // namespace
}  // namespace cumpi::memory
