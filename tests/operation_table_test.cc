#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

#include "protocol/operation_table.h"

namespace cumpi::protocol {
namespace {

// Distinct request handles without an MPI library: the table compares them
// only. Open MPI's handles are pointers, MPICH's integers.
template <typename Handle>
Handle handle_from(std::uintptr_t value) {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<Handle>(value);
  } else {
    return static_cast<Handle>(value);
  }
}

MPI_Request fake_request(std::uintptr_t id) { return handle_from<MPI_Request>(0x1000 + id * 64); }

TEST(OperationTable, PendingOperationsAreCountedAndTakenBack) {
  OperationTable table;
  EXPECT_EQ(table.pending_count(), 0u);
  for (int i = 0; i < 3; ++i) {
    auto operation = std::make_unique<StagedOperation>();
    operation->user = fake_request(static_cast<std::uintptr_t>(i));
    table.add_pending(std::move(operation));
  }
  EXPECT_EQ(table.pending_count(), 3u);
  std::unique_ptr<Operation> middle = table.take_pending(1);
  EXPECT_EQ(middle->user, fake_request(1));
  EXPECT_EQ(table.pending_count(), 2u);
  EXPECT_EQ(table.pending()[0]->user, fake_request(0));
  EXPECT_EQ(table.pending()[1]->user, fake_request(2));
  table.take_pending(0);
  table.take_pending(0);
  EXPECT_EQ(table.pending_count(), 0u);
}

TEST(OperationTable, PersistentRequestsAreFoundByHandle) {
  OperationTable table;
  for (int i = 0; i < 4; ++i) {
    auto operation = std::make_unique<PersistentOperation>();
    operation->request = fake_request(static_cast<std::uintptr_t>(10 + i));
    operation->is_receive = i % 2 == 1;
    table.add_persistent(std::move(operation));
  }
  EXPECT_EQ(table.persistent_count(), 4u);
  ASSERT_NE(table.find_persistent(fake_request(13)), nullptr);
  EXPECT_TRUE(table.find_persistent(fake_request(13))->is_receive);
  EXPECT_EQ(table.find_persistent(fake_request(99)), nullptr);
  std::unique_ptr<PersistentOperation> taken = table.take_persistent(fake_request(11));
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(table.find_persistent(fake_request(11)), nullptr);
  EXPECT_EQ(table.persistent_count(), 3u);
  EXPECT_EQ(table.take_persistent(fake_request(11)), nullptr);
}

TEST(OperationTable, RequestsFreedWhileActiveAreOrphansNotFoundByHandle) {
  OperationTable table;
  auto operation = std::make_unique<PersistentOperation>();
  operation->request = fake_request(1);
  operation->active = true;
  PersistentOperation* raw = operation.get();
  table.add_persistent(std::move(operation));
  EXPECT_TRUE(table.orphaned_persistent().empty());
  raw->freed_by_user = true;
  EXPECT_EQ(table.find_persistent(fake_request(1)), nullptr);
  ASSERT_EQ(table.orphaned_persistent().size(), 1u);
  EXPECT_EQ(table.orphaned_persistent()[0], raw);
  EXPECT_NE(table.take_persistent(fake_request(1)), nullptr);
  EXPECT_EQ(table.persistent_count(), 0u);
}

}  // namespace
}  // namespace cumpi::protocol
