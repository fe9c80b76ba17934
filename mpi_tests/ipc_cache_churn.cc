// IPC cache churn: rank 0 allocates, fills, sends and frees device buffers
// of varying size, over and over (addresses come back reused), and now and
// then sends a buffer it keeps again after refilling it; rank 1 receives
// each into device memory and checks every byte. Stale mappings would show
// as old data; the cache must stay within CUMPI_IPC_CACHE_MAX(_BYTES) and
// the sender's GPU memory must stay bounded although every freed buffer was
// mapped by the receiver.
//
//   ipc_cache_churn [--iterations N] [--max-bytes B]
#include <mpi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

// cumpi's struct cumpi_ipc_cache_info, looked up at run time: the test links
// MPI only.
struct CacheInfo {
  std::size_t open_mappings, mapped_bytes, opens, hits, evictions;
};
using CacheInfoFunction = int (*)(CacheInfo*);

CacheInfoFunction cache_info_function() {
  return reinterpret_cast<CacheInfoFunction>(dlsym(RTLD_DEFAULT, "cumpi_get_ipc_cache_info"));
}

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  return text == nullptr ? fallback : std::strtoull(text, nullptr, 10);
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 10000;
  std::size_t max_bytes = 1u << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--iterations") iterations = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--max-bytes") max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::size_t cache_entries = env_size("CUMPI_IPC_CACHE_MAX", 256);
  const CacheInfoFunction cache_info = cache_info_function();
  std::mt19937 random(12345);
  std::unique_ptr<Buffer> kept;                 // sent again and again, refilled each time
  std::size_t kept_bytes = 0;
  const std::size_t memory_at_start = device_memory_in_use();
  std::size_t memory_peak = memory_at_start;
  for (int i = 0; i < iterations; ++i) {
    Checks::instance().set_context(format("iteration %d", i));
    const bool send_kept = i % 10 == 9 && kept_bytes != 0;
    const std::size_t bytes = send_kept ? kept_bytes : 16384 + random() % (max_bytes - 16384 + 1);
    if (i == 3) kept_bytes = bytes;  // both ranks know the kept buffer's size
    const std::vector<unsigned char> data = pattern(static_cast<unsigned>(i), bytes);
    if (rank == 0) {
      if (send_kept) {
        kept->fill(data);
        MPI_Send(kept->data(), static_cast<int>(bytes), MPI_BYTE, 1, i, MPI_COMM_WORLD);
      } else {
        auto buffer = std::make_unique<Buffer>(Memory::device, bytes);
        buffer->fill(data);
        MPI_Send(buffer->data(), static_cast<int>(bytes), MPI_BYTE, 1, i, MPI_COMM_WORLD);
        if (i == 3) kept = std::move(buffer);
      }
      memory_peak = std::max(memory_peak, device_memory_in_use());
    } else if (rank == 1) {
      Buffer buffer(Memory::device, bytes);
      MPI_Status status{};
      MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, i, MPI_COMM_WORLD, &status);
      CHECK_BYTES(data, buffer.contents(), "received bytes");
      if (cache_info != nullptr && i % 100 == 0) {
        CacheInfo info{};
        cache_info(&info);
        CHECK_TRUE(info.open_mappings <= cache_entries, "%zu mappings open, limit %zu", info.open_mappings,
                   cache_entries);
      }
    }
  }
  Checks::instance().set_context("end");
  if (rank == 1 && cache_info != nullptr) {
    CacheInfo info{};
    cache_info(&info);
    std::printf("ipc cache: %zu opens, %zu hits, %zu evictions, %zu open (%zu bytes)\n", info.opens, info.hits,
                info.evictions, info.open_mappings, info.mapped_bytes);
    CHECK_TRUE(info.opens > 0, "messages went through IPC");
    CHECK_TRUE(info.hits > 0, "the kept buffer's mapping was reused");
    CHECK_TRUE(info.evictions > 0 || static_cast<std::size_t>(iterations) <= cache_entries,
               "mappings were evicted");
  }
  if (rank == 0 && memory_at_start != 0) {
    // The receiver's mappings keep at most the cache's bytes of freed buffers
    // alive, plus what the allocator keeps: far less than all that was sent.
    const std::size_t bound = env_size("CUMPI_IPC_CACHE_MAX_BYTES", 16ull << 30) + (256u << 20);
    std::printf("sender GPU memory: %zu MiB at start, %zu MiB at peak\n", memory_at_start >> 20,
                memory_peak >> 20);
    CHECK_TRUE(memory_peak - memory_at_start <= bound, "GPU memory grew by %zu MiB",
               (memory_peak - memory_at_start) >> 20);
  }
  kept.reset();
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
