// CUDA context life cycles cumpi must survive: a context made only after
// MPI_Init (--late-context), and cudaDeviceReset() before MPI_Finalize after
// cumpi staged device data (its pinned pool and streams belonged to the
// context that went away).
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"

using namespace cumpi_test;

int main(int argc, char** argv) {
  const bool late_context = argc > 1 && std::string(argv[1]) == "--late-context";
  if (!late_context) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  if (late_context) init_device_before_mpi();
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checks::instance().set_context(late_context ? "context made after MPI_Init" : "context made before MPI_Init");
  {
    const std::size_t bytes = 3u << 20;
    Buffer out(Memory::device, bytes);
    Buffer in(Memory::device, bytes);
    out.fill(pattern(static_cast<unsigned>(rank), bytes));
    const int next = (rank + 1) % size;
    const int previous = (rank + size - 1) % size;
    MPI_Sendrecv(out.data(), static_cast<int>(bytes), MPI_BYTE, next, 0, in.data(), static_cast<int>(bytes),
                 MPI_BYTE, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_BYTES(pattern(static_cast<unsigned>(previous), bytes), in.contents(), "ring exchange");
    std::vector<double> ones(1000, 1.0);
    Buffer sum(Memory::device, ones.size() * sizeof(double));
    sum.upload(ones.data(), ones.size() * sizeof(double));
    MPI_Allreduce(MPI_IN_PLACE, sum.data(), 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    std::vector<double> result(1000);
    sum.download(result.data(), result.size() * sizeof(double));
    CHECK_TRUE(result.front() == size && result.back() == size, "device Allreduce");
  }
  if (std::string(device_backend()) == "cuda") {
    // Managed memory is host-accessible: it goes to MPI as it is.
    Checks::instance().set_context("managed memory");
    const int count = 1 << 16;
    int* out = nullptr;
    int* in = nullptr;
    cudaMallocManaged(&out, count * sizeof(int));
    cudaMallocManaged(&in, count * sizeof(int));
    for (int i = 0; i < count; ++i) out[i] = rank * count + i;
    const int next = (rank + 1) % size;
    const int previous = (rank + size - 1) % size;
    MPI_Sendrecv(out, count, MPI_INT, next, 1, in, count, MPI_INT, previous, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    bool all = true;
    for (int i = 0; i < count; ++i) all = all && in[i] == previous * count + i;
    CHECK_TRUE(all, "managed-memory ring exchange");
    cudaFree(out);
    cudaFree(in);
  }
  if (std::string(device_backend()) == "cuda" && !late_context) {
    // The application tears its device down before MPI_Finalize.
    cudaDeviceReset();
  }
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
