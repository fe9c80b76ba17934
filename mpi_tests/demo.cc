// The README's demo: two ranks exchange a device buffer and reduce one, with
// the system MPI under cumpi. Device memory is CUDA's on a GPU machine, the
// emulation's under libcumpi_emu.so (machines without a GPU).
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "common/test_memory.h"

extern "C" int MPIX_Query_cuda_support(void) __attribute__((weak));

using namespace cumpi_test;

int main(int argc, char** argv) {
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int cuda_aware = MPIX_Query_cuda_support != nullptr ? MPIX_Query_cuda_support() : 0;

  const int count = 1 << 20;
  std::vector<float> values(count, static_cast<float>(rank + 1));
  Buffer out(Memory::device, count * sizeof(float));
  Buffer in(Memory::device, count * sizeof(float));
  out.upload(values.data(), values.size() * sizeof(float));

  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  MPI_Sendrecv(out.data(), count, MPI_FLOAT, next, 0, in.data(), count, MPI_FLOAT, previous, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  std::vector<float> received(count);
  in.download(received.data(), received.size() * sizeof(float));
  bool ok = received.front() == static_cast<float>(previous + 1) && received.back() == received.front();

  MPI_Allreduce(MPI_IN_PLACE, out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  out.download(received.data(), received.size() * sizeof(float));
  const float expected = static_cast<float>(size * (size + 1) / 2);
  ok = ok && received.front() == expected && received.back() == expected;

  int all_ok = 0;
  int mine = ok ? 1 : 0;
  MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("cumpi demo: %d ranks, %s device memory, MPIX_Query_cuda_support() = %d\n", size,
                device_backend(), cuda_aware);
    std::printf("cumpi demo: 4 MiB device Sendrecv ring and in-place device Allreduce: %s\n",
                all_ok ? "correct" : "WRONG");
  }
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
