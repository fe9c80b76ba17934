// Buffers for launched tests, in host or device memory. Device memory is the
// emulation backend's when the test runs under libcumpi_emu.so, real CUDA
// memory (cudaMalloc) otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cumpi_test {

enum class Memory { host, device };

const char* memory_name(Memory memory);
// "emulation" or "cuda".
const char* device_backend();

// Before MPI_Init: picks this rank's GPU by local rank and creates its
// context, as applications do. Nothing in emulation.
void init_device_before_mpi();
// True when the process loaded the CUDA driver (the emulation must never).
bool cuda_driver_loaded();
// Bytes of this rank's GPU in use (cudaMemGetInfo); 0 in emulation.
std::size_t device_memory_in_use();

class Buffer {
 public:
  Buffer(Memory memory, std::size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  std::size_t bytes() const { return bytes_; }
  Memory memory() const { return memory_; }

  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  std::vector<unsigned char> contents() const;
  void fill(const std::vector<unsigned char>& bytes) { upload(bytes.data(), bytes.size()); }

 private:
  Memory memory_;
  std::size_t bytes_;
  void* data_ = nullptr;
};

// A deterministic byte pattern: different for every (seed, index).
unsigned char pattern_byte(unsigned seed, std::size_t index);
std::vector<unsigned char> pattern(unsigned seed, std::size_t bytes);

}  // namespace cumpi_test
