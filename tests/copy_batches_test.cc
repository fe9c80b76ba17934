#include "memory/copy_batches.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace cumpi::memory {
namespace {

// A device that records what it is asked: each submission's context and
// number of copies, each query; a batch completes once `complete_after`
// queries of it have been made.
struct FakeDevice {
  struct Event {
    int queries = 0;
  };
  std::vector<std::pair<void*, std::size_t>> submissions;
  std::vector<Event*> released;
  int queries = 0;
  int complete_after = 1;
  std::uint64_t clock_ns = 1;
  Status submit_status;
  CopyBatches batches{CopyDevice{
      [this](void* context, const std::vector<QueuedCopy>& copies, void** event) {
        submissions.emplace_back(context, copies.size());
        *event = new Event();
        return submit_status;
      },
      [this](void* event, bool* complete) {
        ++queries;
        *complete = ++static_cast<Event*>(event)->queries >= complete_after;
        return Status::ok();
      },
      [](void*) { return Status::ok(); },
      [this](void*, void* event) {
        released.push_back(static_cast<Event*>(event));
        delete static_cast<Event*>(event);
      },
      [this] { return clock_ns; }}};
};

int context_a;
int context_b;
char bytes[4];

TEST(CopyBatches, OneSubmissionPerContextAtFlush) {
  FakeDevice device;
  CopyTicket first, second, third;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &first);
  device.batches.queue(bytes + 1, bytes + 2, 1, &context_a, &second);
  device.batches.queue(bytes + 2, bytes + 3, 1, &context_b, &third);
  EXPECT_TRUE(device.submissions.empty());
  device.batches.flush();
  ASSERT_EQ(device.submissions.size(), 2u);
  EXPECT_EQ(device.submissions[0], std::make_pair(static_cast<void*>(&context_a), std::size_t{2}));
  EXPECT_EQ(device.submissions[1], std::make_pair(static_cast<void*>(&context_b), std::size_t{1}));
  bool finished = false;
  for (CopyTicket* ticket : {&first, &second, &third}) {
    EXPECT_TRUE(device.batches.poll(ticket, &finished).is_ok());
    EXPECT_TRUE(finished);
    EXPECT_EQ(ticket->batch, nullptr);
  }
  EXPECT_EQ(device.queries, 2) << "the second ticket of a complete batch does not ask again";
  EXPECT_EQ(device.released.size(), 2u) << "each batch's event goes back with its last ticket";
  device.batches.flush();
  EXPECT_EQ(device.submissions.size(), 2u) << "nothing left to submit";
}

TEST(CopyBatches, AnEmptyCopyJoinsNoBatch) {
  FakeDevice device;
  CopyTicket ticket;
  device.batches.queue(bytes, bytes + 1, 0, &context_a, &ticket);
  EXPECT_EQ(ticket.batch, nullptr);
  EXPECT_EQ(ticket.event, nullptr);
  device.batches.flush();
  EXPECT_TRUE(device.submissions.empty());
}

TEST(CopyBatches, PollingAnOpenBatchSubmitsIt) {
  FakeDevice device;
  CopyTicket ticket;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &ticket);
  bool finished = false;
  EXPECT_TRUE(device.batches.poll(&ticket, &finished).is_ok());
  EXPECT_EQ(device.submissions.size(), 1u);
  EXPECT_TRUE(finished);
  CopyTicket later;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &later);
  device.batches.flush();
  EXPECT_EQ(device.submissions.size(), 2u) << "a copy queued after submission goes in a new batch";
  EXPECT_TRUE(device.batches.wait(&later).is_ok());
  EXPECT_EQ(later.batch, nullptr);
}

TEST(CopyBatches, ARunningBatchIsAskedAgainOnlyAfterAMicrosecond) {
  FakeDevice device;
  device.complete_after = 2;
  CopyTicket first, second;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &first);
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &second);
  device.batches.flush();
  bool finished = true;
  EXPECT_TRUE(device.batches.poll(&first, &finished).is_ok());
  EXPECT_FALSE(finished);
  EXPECT_TRUE(device.batches.poll(&second, &finished).is_ok());
  EXPECT_FALSE(finished) << "still running: the last answer stands";
  EXPECT_TRUE(device.batches.poll(&first, &finished).is_ok());
  EXPECT_FALSE(finished);
  EXPECT_EQ(device.queries, 1);
  device.clock_ns += kRequeryNs;
  EXPECT_TRUE(device.batches.poll(&second, &finished).is_ok());
  EXPECT_TRUE(finished);
  EXPECT_TRUE(device.batches.poll(&first, &finished).is_ok());
  EXPECT_TRUE(finished);
  EXPECT_EQ(device.queries, 2);
  EXPECT_EQ(device.released.size(), 1u);
}

TEST(CopyBatches, ALoneCopyIsAskedAtEveryPoll) {
  FakeDevice device;
  device.complete_after = 2;
  CopyTicket only;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &only);
  device.batches.flush();
  bool finished = true;
  EXPECT_TRUE(device.batches.poll(&only, &finished).is_ok());
  EXPECT_FALSE(finished);
  EXPECT_TRUE(device.batches.poll(&only, &finished).is_ok());
  EXPECT_TRUE(finished) << "its receive is waiting for it: no pause between queries";
  EXPECT_EQ(device.queries, 2);
}

TEST(CopyBatches, ASubmissionErrorReachesEveryTicketOfItsBatch) {
  FakeDevice device;
  device.submit_status = Status::error(StatusCode::cuda_error, "cuMemcpyBatchAsync failed: injected");
  CopyTicket first, second;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &first);
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &second);
  bool finished = false;
  EXPECT_EQ(device.batches.poll(&first, &finished).code(), StatusCode::cuda_error);
  EXPECT_TRUE(finished);
  EXPECT_EQ(device.batches.wait(&second).code(), StatusCode::cuda_error);
  EXPECT_EQ(device.queries, 0);
  EXPECT_EQ(device.released.size(), 1u);
}

TEST(CopyBatches, NothingIsSubmittedWhileHeldButAWaitStillIs) {
  FakeDevice device;
  CopyTicket first, second;
  device.batches.queue(bytes, bytes + 1, 1, &context_a, &first);
  {
    const HoldCopySubmissions hold;
    bool finished = true;
    device.batches.flush();
    EXPECT_TRUE(device.batches.poll(&first, &finished).is_ok());
    EXPECT_FALSE(finished);
    device.batches.queue(bytes, bytes + 1, 1, &context_a, &second);
    EXPECT_TRUE(device.submissions.empty());
  }
  EXPECT_FALSE(HoldCopySubmissions::active());
  device.batches.flush();
  ASSERT_EQ(device.submissions.size(), 1u);
  EXPECT_EQ(device.submissions[0].second, 2u) << "the held copies went as one batch";
  {
    const HoldCopySubmissions hold;
    CopyTicket third;
    device.batches.queue(bytes, bytes + 1, 1, &context_a, &third);
    EXPECT_TRUE(device.batches.wait(&third).is_ok());
    EXPECT_EQ(device.submissions.size(), 2u);
  }
  EXPECT_TRUE(device.batches.wait(&first).is_ok());
  EXPECT_TRUE(device.batches.wait(&second).is_ok());
}

}  // namespace
}  // namespace cumpi::memory
