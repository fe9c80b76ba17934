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

#include <stddef.h>

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

/** @brief The state of this process's cache of CUDA IPC mappings of peer buffers. */
struct cumpi_ipc_cache_info {
  size_t open_mappings; /**< peer allocations mapped now */
  size_t mapped_bytes;  /**< their bytes */
  size_t opens;         /**< handles opened so far */
  size_t hits;          /**< messages that found their mapping open */
  size_t evictions;     /**< mappings closed to stay within CUMPI_IPC_CACHE_MAX(_BYTES) */
};

/** @brief Fills `info`; returns 0. */
CUMPI_PUBLIC int cumpi_get_ipc_cache_info(struct cumpi_ipc_cache_info* info);

/**
 * @brief cumpi's own state of communicators: made on first use by the
 *        engine, released when the communicator is freed.
 */
struct cumpi_comm_context_info {
  size_t made;     /**< contexts made so far (MPI_COMM_WORLD's at MPI_Init) */
  size_t released; /**< contexts released with their communicators */
};

/** @brief Fills `info`; returns 0. */
CUMPI_PUBLIC int cumpi_get_comm_context_info(struct cumpi_comm_context_info* info);

#ifdef __cplusplus
}
#endif

#endif /* CUMPI_CUMPI_H */
