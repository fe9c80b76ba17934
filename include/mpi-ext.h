/*
 * cumpi's mpi-ext.h: the system MPI's own extensions, then the CUDA-aware
 * advertisement that codes test at compile time. Put cumpi's include
 * directory before the MPI one (mpicc -I<prefix>/include ...).
 */
#ifndef CUMPI_MPI_EXT_H
#define CUMPI_MPI_EXT_H

#if defined(__has_include_next)
#if __has_include_next(<mpi-ext.h>)
#include_next <mpi-ext.h>
#endif
#endif

#ifdef MPIX_CUDA_AWARE_SUPPORT
#undef MPIX_CUDA_AWARE_SUPPORT
#endif
#define MPIX_CUDA_AWARE_SUPPORT 1

#ifdef __cplusplus
extern "C" {
#endif
int MPIX_Query_cuda_support(void);
#ifdef __cplusplus
}
#endif

#endif /* CUMPI_MPI_EXT_H */
