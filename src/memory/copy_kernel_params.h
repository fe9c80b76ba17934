// The parameters of cumpi's batched copy kernel (copy_kernel.cu), shared by
// the kernel and the CUDA copy engine that launches it: one launch copies many
// buffers, each in 16-byte vectors and then single bytes.
#pragma once

#define CUMPI_COPY_BATCH_MOST 120  // 120 descriptors: 3840 bytes, within the 4 KiB of kernel parameters

struct cumpi_copy_descriptor {
  unsigned long long from;     // device address, 16-byte aligned when vectors > 0
  unsigned long long to;       // device address, 16-byte aligned when vectors > 0
  unsigned long long vectors;  // 16-byte units first
  unsigned long long tail;     // then this many bytes
};

struct cumpi_copy_batch_params {
  struct cumpi_copy_descriptor copies[CUMPI_COPY_BATCH_MOST];
};
