#include "common/test_memory.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cumpi_test {

namespace {

struct Emulation {
  void* (*malloc_fn)(size_t) = nullptr;
  int (*free_fn)(void*) = nullptr;
  int (*memcpy_fn)(void*, const void*, size_t) = nullptr;
};

const Emulation& emulation() {
  static Emulation api = [] {
    Emulation found;
    found.malloc_fn = reinterpret_cast<void* (*)(size_t)>(dlsym(RTLD_DEFAULT, "cumpi_emu_malloc"));
    found.free_fn = reinterpret_cast<int (*)(void*)>(dlsym(RTLD_DEFAULT, "cumpi_emu_free"));
    found.memcpy_fn = reinterpret_cast<int (*)(void*, const void*, size_t)>(dlsym(RTLD_DEFAULT, "cumpi_emu_memcpy"));
    return found;
  }();
  return api;
}

bool emulated() { return emulation().malloc_fn != nullptr; }

void check_cuda(cudaError_t error, const char* call) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "test: %s failed: %s\n", call, cudaGetErrorString(error));
    std::abort();
  }
}

void copy(void* destination, const void* source, std::size_t bytes) {
  if (bytes == 0) {
    return;
  }
  if (emulated()) {
    if (emulation().memcpy_fn(destination, source, bytes) != 0) {
      std::fprintf(stderr, "test: cumpi_emu_memcpy failed\n");
      std::abort();
    }
    return;
  }
  check_cuda(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault), "cudaMemcpy");
}

int local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* value = std::getenv(name)) {
      return std::atoi(value);
    }
  }
  return 0;
}

}  // namespace

const char* memory_name(Memory memory) { return memory == Memory::host ? "host" : "device"; }

const char* device_backend() { return emulated() ? "emulation" : "cuda"; }

void init_device_before_mpi() {
  if (emulated()) {
    return;
  }
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cudaSetDevice(local_rank() % devices), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree(0)");
}

std::size_t device_memory_in_use() {
  if (emulated()) {
    return 0;
  }
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return total_bytes - free_bytes;
}

bool cuda_driver_loaded() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) {
    dlclose(handle);
  }
  return handle != nullptr;
}

// TEST_DEVICE_ALLOCATOR=async: device buffers from the stream-ordered pool
// (cudaMallocAsync), which legacy CUDA IPC cannot export.
static bool pool_allocator() {
  static const bool pool = [] {
    const char* choice = std::getenv("TEST_DEVICE_ALLOCATOR");
    return choice != nullptr && std::string(choice) == "async";
  }();
  return pool;
}

namespace {

// Freed memory stays in the heap for the next buffer instead of going back
// to the kernel: the tests make and drop buffers of tens of megabytes by the
// hundred, and faulting fresh pages in is most of their time on a virtual
// machine (the 64 MiB cases of p2p_matrix: 130 s, nearly all page faults).
// Only the tests' own allocations change: cumpi's staging is its own mmap.
const bool kFreedMemoryKept = [] {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  return true;
}();

// Host memory; a large buffer in huge pages where the kernel gives them on
// request (transparent huge pages in madvise mode): faulting in gigabytes
// page by page costs seconds on a virtual machine.
void* host_allocation(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  if (bytes < 16 * kHugePage) {
    return std::malloc(bytes == 0 ? 1 : bytes);
  }
  void* data = nullptr;
  if (posix_memalign(&data, kHugePage, bytes) != 0) {
    return nullptr;
  }
  madvise(data, bytes, MADV_HUGEPAGE);  // advice only: without it, small pages
  return data;
}

}  // namespace

Buffer::Buffer(Memory memory, std::size_t bytes) : memory_(memory), bytes_(bytes) {
  if (memory == Memory::host) {
    data_ = host_allocation(bytes);
  } else if (emulated()) {
    data_ = emulation().malloc_fn(bytes);
  } else if (pool_allocator()) {
    check_cuda(cudaMallocAsync(&data_, bytes == 0 ? 1 : bytes, nullptr), "cudaMallocAsync");
    check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  } else {
    check_cuda(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
  }
  if (data_ == nullptr) {
    std::fprintf(stderr, "test: cannot allocate %zu bytes of %s memory\n", bytes, memory_name(memory));
    std::abort();
  }
}

Buffer::~Buffer() {
  if (memory_ == Memory::host) {
    std::free(data_);
  } else if (emulated()) {
    emulation().free_fn(data_);
  } else if (pool_allocator()) {
    cudaFreeAsync(data_, nullptr);
    cudaStreamSynchronize(nullptr);
  } else {
    cudaFree(data_);
  }
}

void Buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) {
    return;
  }
  if (memory_ == Memory::host) {
    std::memcpy(static_cast<char*>(data_) + offset, host, bytes);
  } else {
    copy(static_cast<char*>(data_) + offset, host, bytes);
  }
}

void Buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) {
    return;
  }
  if (memory_ == Memory::host) {
    std::memcpy(host, static_cast<const char*>(data_) + offset, bytes);
  } else {
    copy(host, static_cast<const char*>(data_) + offset, bytes);
  }
}

std::vector<unsigned char> Buffer::contents() const {
  std::vector<unsigned char> bytes(bytes_);
  download(bytes.data(), bytes_);
  return bytes;
}

namespace {

// Inlined into pattern()'s loop, which fills hundreds of megabytes per test.
inline unsigned char mixed_byte(unsigned seed, std::size_t index) {
  const std::size_t mixed = (index * 2654435761u) ^ (seed * 40503u) ^ (index >> 11);
  return static_cast<unsigned char>(mixed ^ (mixed >> 8));
}

}  // namespace

unsigned char pattern_byte(unsigned seed, std::size_t index) { return mixed_byte(seed, index); }

std::vector<unsigned char> pattern(unsigned seed, std::size_t bytes) {
  std::vector<unsigned char> out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    out[i] = mixed_byte(seed, i);
  }
  return out;
}

}  // namespace cumpi_test
