#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>

#include "cumpi/cumpi.h"

#if !defined(MPIX_CUDA_AWARE_SUPPORT) || !MPIX_CUDA_AWARE_SUPPORT
#error "cumpi's mpi-ext.h did not advertise CUDA-aware support"
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int support = MPIX_Query_cuda_support();
  int value = 3;
  int sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("cumpi %s linked: MPIX_Query_cuda_support() = %d, sum %d\n", cumpi_version(), support, sum);
  MPI_Finalize();
  return support == 1 && sum == 3 ? 0 : 1;
}
