/**
 * @file cumpi.h
 * @brief Public interface of libcumpi, the CUDA-aware layer under an MPI
 *        library that is not CUDA-aware.
 *
 * Programs need none of this to use cumpi: preloading the library is enough.
 * These functions let an application ask at run time what it runs on.
 */
#ifndef CUMPI_CUMPI_H
#define CUMPI_CUMPI_H

#include "cumpi/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Whether MPI calls accept CUDA device buffers.
 * @return 1 under cumpi (GROMACS, LAMMPS/Kokkos, PyTorch ask this).
 */
CUMPI_PUBLIC int MPIX_Query_cuda_support(void);

/** @brief The cumpi version, "major.minor.patch". */
CUMPI_PUBLIC const char* cumpi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CUMPI_CUMPI_H */
