// The parameters of cumpi's reduction kernels (reduction_kernel.cu), shared
// by the kernels, the CUDA copy engine that launches them and the host
// emulation: one launch reduces up to CUMPI_REDUCE_MOST_INPUTS buffers
// element by element into one.
#pragma once

#define CUMPI_REDUCE_MOST_INPUTS 64  // 64 addresses: 512 bytes of the 4 KiB of kernel parameters

// Element types (memory::ReductionType).
#define CUMPI_REDUCE_INT8 0
#define CUMPI_REDUCE_UINT8 1
#define CUMPI_REDUCE_INT16 2
#define CUMPI_REDUCE_UINT16 3
#define CUMPI_REDUCE_INT32 4
#define CUMPI_REDUCE_UINT32 5
#define CUMPI_REDUCE_INT64 6
#define CUMPI_REDUCE_UINT64 7
#define CUMPI_REDUCE_FLOAT32 8
#define CUMPI_REDUCE_FLOAT64 9
#define CUMPI_REDUCE_COMPLEX64 10
#define CUMPI_REDUCE_COMPLEX128 11
#define CUMPI_REDUCE_BOOL 12
#define CUMPI_REDUCE_FLOAT_INT 13
#define CUMPI_REDUCE_DOUBLE_INT 14
#define CUMPI_REDUCE_LONG_INT 15
#define CUMPI_REDUCE_INT_INT 16
#define CUMPI_REDUCE_SHORT_INT 17
#define CUMPI_REDUCE_TYPE_COUNT 18

// Operations (memory::ReductionOp).
#define CUMPI_REDUCE_SUM 0
#define CUMPI_REDUCE_PROD 1
#define CUMPI_REDUCE_MIN 2
#define CUMPI_REDUCE_MAX 3
#define CUMPI_REDUCE_LAND 4
#define CUMPI_REDUCE_LOR 5
#define CUMPI_REDUCE_LXOR 6
#define CUMPI_REDUCE_BAND 7
#define CUMPI_REDUCE_BOR 8
#define CUMPI_REDUCE_BXOR 9
#define CUMPI_REDUCE_MAXLOC 10
#define CUMPI_REDUCE_MINLOC 11

struct cumpi_reduce_params {
  unsigned long long inputs[CUMPI_REDUCE_MOST_INPUTS];  // device addresses, in reduction order
  unsigned long long output;                            // may equal one input
  unsigned long long count;                             // elements
  unsigned input_count;
  unsigned type;  // CUMPI_REDUCE_<type>
  unsigned op;    // CUMPI_REDUCE_<op>
};
