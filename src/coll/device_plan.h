// One rank's part of a collective call on device buffers, as the GPU
// algorithms (ipc, nccl) see it: which of its buffers are read and which
// written, how many bytes, the kernels' element and op. Every rank plans
// from the call's matching arguments and its own buffers.
#pragma once

#include <cstddef>
#include <string>

#include "coll/algorithm.h"
#include "memory/reduction.h"

namespace cumpi::coll {

// How the ipc algorithm runs a call (coll/ipc_algorithm.h): the
// collective's shape, with Allreduce one shot unless in place.
enum class Shape { one_shot, chunked, root_reduces, root_copies, gather_blocks, exchange_blocks, scatter_reduce };

// One rank's part of a call, in bytes.
struct Plan {
  Shape shape = Shape::one_shot;
  const void* input = nullptr;  // exposed; null: this rank exposes none
  std::size_t input_bytes = 0;
  const memory::PointerInfo* input_where = nullptr;
  void* output = nullptr;  // written by this rank; null: none
  std::size_t output_bytes = 0;
  const memory::PointerInfo* output_where = nullptr;
  bool expose_output = false;  // ipc: the chunked Allreduce's reducers expose their outputs
  memory::ReductionType element = memory::ReductionType::int32;
  memory::ReductionOp op = memory::ReductionOp::sum;
  std::size_t elements = 0;     // reductions: of one vector (a block's for Reduce_scatter_block)
  std::size_t block_bytes = 0;  // Bcast: the whole; Allgather, Alltoall: a rank's block
  int root = 0;
  int rank = 0;
  int size = 0;
};

inline bool in_place(const void* buffer) { return buffer == MPI_IN_PLACE; }
bool is_reduction(Collective collective);
// Bytes of `count` elements of a type whose elements lie back to back from
// the pointer on; false for any other layout.
bool contiguous_bytes(MPI_Datatype type, int count, std::size_t* bytes);
// The kernels' element of a reduction's type, whose extent must be the
// element's C layout for arrays of it to be the kernels' arrays.
bool reduction_element(const CollectiveCall& call, memory::ReductionType* element, memory::ReductionOp* op,
                       std::string* why_not);
// What no GPU algorithm takes, from the call's matching arguments alone:
// in-place Alltoall and Reduce_scatter_block, reductions of no elements or
// of a type and op the kernels lack. For the reductions it takes, *element
// and *op are the kernels'.
bool fits_gpu_algorithms(const CollectiveCall& call, memory::ReductionType* element, memory::ReductionOp* op,
                         std::string* why_not);
// This rank's plan; false with why for a call no GPU algorithm can take.
bool plan_of(const CollectiveCall& call, Plan* plan, std::string* why_not);
// The context this rank computes in: its output's, else its input's.
void* context_of_plan(const Plan& plan);
// Every buffer the plan reads or writes lies in one device allocation of
// context_of_plan()'s, and the plan moves some bytes: what a rank can offer.
bool buffers_on_device(const Plan& plan, std::string* why_not);

}  // namespace cumpi::coll
