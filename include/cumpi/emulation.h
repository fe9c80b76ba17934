/**
 * @file emulation.h
 * @brief Test-only API of libcumpi_emu.so, the host emulation backend.
 *
 * In libcumpi_emu.so "device memory" is host memory the CPU cannot touch
 * directly: each allocation is a memfd mapped twice, once without access (the
 * "device" address handed to the application, so that passing it to MPI
 * faults as a real device pointer does) and once readable and writable for
 * the backend's copies. The production library has none of these symbols.
 */
#ifndef CUMPI_EMULATION_H
#define CUMPI_EMULATION_H

#include <stddef.h>

#include "cumpi/visibility.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Allocates emulated device memory; NULL on failure. */
CUMPI_PUBLIC void* cumpi_emu_malloc(size_t bytes);

/** @brief Frees what cumpi_emu_malloc returned; 0 on success. */
CUMPI_PUBLIC int cumpi_emu_free(void* device);

/** @brief Copies between any mix of host and emulated device memory; 0 on success. */
CUMPI_PUBLIC int cumpi_emu_memcpy(void* destination, const void* source, size_t bytes);

/** @brief Makes the backend's next `count` device copies fail, as a CUDA error would. */
CUMPI_PUBLIC void cumpi_emu_fail_next_copies(int count);

#ifdef __cplusplus
}
#endif

#endif /* CUMPI_EMULATION_H */
