// NCCL as the nccl algorithm reaches it: libnccl.so.2 loaded with dlopen
// where the test process can load it itself (every function found, the
// version read), a clear reason where it cannot, and the types and ops
// handed to NCCL exactly those it reduces. The algorithm declines in the
// emulation backend (no CUDA streams) and for what NCCL does not take.
#include "coll/nccl_library.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "coll/nccl_algorithm.h"
#include "protocol/comm_context.h"
#include "protocol/node_map.h"

namespace cumpi::coll {
namespace {

using memory::ReductionOp;
using memory::ReductionType;

// Whether this process can load NCCL, asked without cumpi.
bool loadable_here() {
  void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(NcclLibraryTest, LoadsWhereTheProcessCanAndSaysWhyWhereNot) {
  std::string why_not;
  const bool available = nccl::available(&why_not);
#if CUMPI_TEST_HAVE_NCCL
  EXPECT_EQ(available, loadable_here()) << why_not;
  if (available) {
    EXPECT_EQ(nccl::version().rfind("2.", 0), 0u) << nccl::version();
  } else {
    EXPECT_NE(why_not.find("libnccl.so.2"), std::string::npos) << why_not;
  }
#else
  EXPECT_FALSE(available);
  EXPECT_NE(why_not.find("without nccl.h"), std::string::npos) << why_not;
#endif
}

TEST(NcclLibraryTest, ReducesTheTypesAndOpsNcclHas) {
#if CUMPI_TEST_HAVE_NCCL
  for (ReductionType type :
       {ReductionType::int8, ReductionType::uint8, ReductionType::int32, ReductionType::uint32, ReductionType::int64,
        ReductionType::uint64, ReductionType::float32, ReductionType::float64}) {
    for (ReductionOp op : {ReductionOp::sum, ReductionOp::prod, ReductionOp::min, ReductionOp::max}) {
      EXPECT_TRUE(nccl::reduces(type, op)) << static_cast<unsigned>(type) << " " << static_cast<unsigned>(op);
    }
    for (ReductionOp op : {ReductionOp::land, ReductionOp::lor, ReductionOp::lxor, ReductionOp::band, ReductionOp::bor,
                           ReductionOp::bxor, ReductionOp::maxloc, ReductionOp::minloc}) {
      EXPECT_FALSE(nccl::reduces(type, op)) << static_cast<unsigned>(type) << " " << static_cast<unsigned>(op);
    }
  }
  for (ReductionType type :
       {ReductionType::int16, ReductionType::uint16, ReductionType::complex64, ReductionType::complex128}) {
    EXPECT_FALSE(nccl::reduces(type, ReductionOp::sum)) << static_cast<unsigned>(type);
  }
#else
  EXPECT_FALSE(nccl::reduces(ReductionType::float32, ReductionOp::sum));
#endif
}

class NcclAlgorithmTest : public ::testing::Test {
 protected:
  void SetUp() override { protocol::set_node_map({0, 0}, 0); }
  void TearDown() override { protocol::forget_node_map(); }
};

TEST_F(NcclAlgorithmTest, DeclinesInPlaceAlltoallAndTheEmulationBackend) {
  const protocol::CommContext context({0, 1}, {0, 1}, false);
  CollectiveCall call;
  call.collective = Collective::alltoall;
  call.send_count = 1024;
  call.send_type = MPI_BYTE;
  call.sendbuf = MPI_IN_PLACE;
  std::string why_not;
  EXPECT_FALSE(nccl_algorithm().takes(context, call, &why_not));
  EXPECT_EQ(why_not, "in place");
  // Nonblocking calls are taken as blocking ones (they run in their start).
  call.collective = Collective::bcast;
  MPI_Request request = MPI_REQUEST_NULL;
  call.request = &request;
  EXPECT_FALSE(nccl_algorithm().takes(context, call, &why_not));  // the unit tests' backend is the emulation's
  EXPECT_EQ(why_not, "no CUDA streams (the emulation backend)");
}

}  // namespace
}  // namespace cumpi::coll
