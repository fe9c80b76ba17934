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

/**
 * @brief Collectives on device buffers so far (blocking and nonblocking
 *        calls of the collective seam: Allreduce, Reduce, Bcast, Allgather,
 *        Alltoall, Reduce_scatter_block) and the agreement boards behind
 *        the GPU algorithms.
 */
struct cumpi_coll_info {
  size_t on_gpu;          /**< calls run by a GPU algorithm every rank agreed on (nccl, ipc) */
  size_t staged;          /**< calls run by the staged algorithm */
  size_t boards_made;     /**< agreement boards made (one per communicator of one node that used the seam) */
  size_t boards_released; /**< boards released with their communicators */
  size_t nccl_made;       /**< NCCL communicators made (at the first nccl call on a communicator) */
  size_t nccl_destroyed;  /**< NCCL communicators destroyed with their communicators */
  size_t hierarchical;    /**< calls run in steps across nodes (CUMPI_COLL_HIERARCHY), host buffers too; their
                               steps count again above */
};

/** @brief Fills `info`; returns 0. */
CUMPI_PUBLIC int cumpi_get_coll_info(struct cumpi_coll_info* info);

/**
 * @brief Replaces CUMPI_COLL's list of collective algorithms (same syntax,
 *        e.g. "staged" or "ipc,staged") for the calls that follow.
 *
 * Every rank of the job must make the same call at the same point of its
 * sequence of collectives (benchmarks compare algorithms in one run so).
 * @return 0, or -1 for a list with an unknown name (nothing changes then).
 */
CUMPI_PUBLIC int cumpi_set_coll(const char* algorithms);

/**
 * @brief Turns the collectives in steps across nodes (CUMPI_COLL_HIERARCHY:
 *        MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Allgather) on (1) or off
 *        (0) for the calls that follow.
 *
 * Every rank of the job must make the same call at the same point of its
 * sequence of collectives: ranks that disagree wait for each other forever.
 * @return 0, or -1 before MPI_Init or after MPI_Finalize (nothing changes
 *         then).
 */
CUMPI_PUBLIC int cumpi_set_coll_hierarchy(int on);

/** @brief One CUMPI_* setting as this process's environment gives it now. */
struct cumpi_setting {
  const char* name;    /**< "CUMPI_LOG" */
  const char* value;   /**< the value in effect */
  const char* source;  /**< "environment" or "default" */
  const char* meaning; /**< what it does */
};

/**
 * @brief Fills up to `capacity` settings (every CUMPI_* knob, in the
 *        README's order), read from the environment now.
 * @return The number of knobs. The strings live until the next call.
 */
CUMPI_PUBLIC int cumpi_get_settings(struct cumpi_setting* settings, int capacity);

/** @brief How this libcumpi was built, and what it finds at run time. */
struct cumpi_build_info {
  int ucx;                /**< 1: the ucx transport is built in */
  int kernels;            /**< 1: the copy and reduction kernels are built in (nvcc was found) */
  int nccl_loadable;      /**< 1: libnccl.so.2 loads (the nccl collective algorithm can run) */
  const char* nccl;       /**< NCCL's version, or why it cannot be used */
  const char* mpi_header; /**< the MPI whose mpi.h cumpi was built against */
};

/** @brief Fills `info`; returns 0. The strings live until the next call. */
CUMPI_PUBLIC int cumpi_get_build_info(struct cumpi_build_info* info);

#ifdef __cplusplus
}
#endif

#endif /* CUMPI_CUMPI_H */
