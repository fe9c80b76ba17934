// The test API for Fortran programs, through bind(C): device memory of the
// backend the test runs on (the emulation's under libcumpi_emu.so, cudaMalloc
// otherwise) and copies to and from it. Fortran holds only the address: the
// program never touches device memory, it passes it to MPI.
#include <cstddef>
#include <map>
#include <memory>

#include "common/test_memory.h"

namespace {

std::map<void*, std::unique_ptr<cumpi_test::Buffer>>& buffers() {
  static std::map<void*, std::unique_ptr<cumpi_test::Buffer>> all;
  return all;
}

}  // namespace

extern "C" {

void cumpi_test_init_device() { cumpi_test::init_device_before_mpi(); }

void* cumpi_test_device_alloc(std::size_t bytes) {
  auto buffer = std::make_unique<cumpi_test::Buffer>(cumpi_test::Memory::device, bytes);
  void* address = buffer->data();
  buffers()[address] = std::move(buffer);
  return address;
}

void cumpi_test_device_free(void* device) { buffers().erase(device); }

void cumpi_test_device_upload(void* device, const void* host, std::size_t bytes) {
  buffers().at(device)->upload(host, bytes);
}

void cumpi_test_device_download(void* host, void* device, std::size_t bytes) {
  buffers().at(device)->download(host, bytes);
}

}  // extern "C"
