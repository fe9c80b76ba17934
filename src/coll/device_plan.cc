#include "coll/device_plan.h"

#include <cstdint>

#include "coll/reduction_type.h"
#include "memory/classifier.h"
#include "memory/datatype_layout.h"
#include "runtime/real_mpi.h"

namespace cumpi::coll {

bool is_reduction(Collective collective) {
  return collective == Collective::allreduce || collective == Collective::reduce ||
         collective == Collective::reduce_scatter_block;
}

bool contiguous_bytes(MPI_Datatype type, int count, std::size_t* bytes) {
  memory::TypeLayout layout;
  if (!memory::query_layout(type, &layout).is_ok() || count < 0) {
    return false;
  }
  const bool packed = layout.size == layout.extent && layout.true_lb == 0 && layout.true_extent == layout.size &&
                      layout.element_in_order;
  *bytes = static_cast<std::size_t>(layout.size) * static_cast<std::size_t>(count);
  return packed;
}

bool reduction_element(const CollectiveCall& call, memory::ReductionType* element, memory::ReductionOp* op,
                       std::string* why_not) {
  if (!reduction_of(call.send_type, call.op, element, op, why_not)) {
    return false;
  }
  memory::TypeLayout layout;
  if (!memory::query_layout(call.send_type, &layout).is_ok() || layout.true_lb != 0 ||
      static_cast<std::size_t>(layout.extent) != memory::element_bytes(*element)) {
    *why_not = "a datatype whose extent is not its C layout's";
    return false;
  }
  return true;
}

static bool plan_reduction(const CollectiveCall& call, Plan* plan, std::string* why_not) {
  if (!reduction_element(call, &plan->element, &plan->op, why_not)) {
    return false;
  }
  plan->elements = static_cast<std::size_t>(call.send_count);
  const std::size_t bytes = plan->elements * memory::element_bytes(plan->element);
  const bool here = in_place(call.sendbuf);
  switch (call.collective) {
    case Collective::allreduce:
      plan->shape = here ? Shape::chunked : Shape::one_shot;  // the ipc algorithm chunks large ones too
      plan->input = here ? call.recvbuf : call.sendbuf;
      plan->input_where = here ? &call.recv_where : &call.send_where;
      plan->input_bytes = bytes;
      plan->output = call.recvbuf;
      plan->output_where = &call.recv_where;
      plan->output_bytes = bytes;
      return true;
    case Collective::reduce:
      plan->shape = Shape::root_reduces;
      plan->input = here ? call.recvbuf : call.sendbuf;
      plan->input_where = here ? &call.recv_where : &call.send_where;
      plan->input_bytes = bytes;
      if (plan->rank == call.root) {
        plan->output = call.recvbuf;
        plan->output_where = &call.recv_where;
        plan->output_bytes = bytes;
      }
      return true;
    default:  // Reduce_scatter_block: send_count elements a block
      plan->shape = Shape::scatter_reduce;
      plan->input = call.sendbuf;
      plan->input_where = &call.send_where;
      plan->input_bytes = bytes * static_cast<std::size_t>(plan->size);
      plan->output = call.recvbuf;
      plan->output_where = &call.recv_where;
      plan->output_bytes = bytes;
      return true;
  }
}

static bool plan_copies(const CollectiveCall& call, Plan* plan, std::string* why_not) {
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
  const bool here = in_place(call.sendbuf);
  if (call.collective == Collective::bcast) {
    if (!contiguous_bytes(call.send_type, call.send_count, &plan->block_bytes)) {
      *why_not = "a datatype with gaps";
      return false;
    }
    plan->shape = Shape::root_copies;
    if (plan->rank == call.root) {
      plan->input = call.recvbuf;
      plan->input_where = &call.recv_where;
      plan->input_bytes = plan->block_bytes;
    } else {
      plan->output = call.recvbuf;
      plan->output_where = &call.recv_where;
      plan->output_bytes = plan->block_bytes;
    }
    return true;
  }
  if (!contiguous_bytes(call.recv_type, call.recv_count, &recv_bytes) ||
      (!here && !contiguous_bytes(call.send_type, call.send_count, &send_bytes))) {
    *why_not = "a datatype with gaps";
    return false;
  }
  if (!here && send_bytes != recv_bytes) {
    *why_not = "send and receive blocks of different sizes";
    return false;
  }
  plan->block_bytes = recv_bytes;
  const std::size_t all_blocks = recv_bytes * static_cast<std::size_t>(plan->size);
  plan->output = call.recvbuf;
  plan->output_where = &call.recv_where;
  plan->output_bytes = all_blocks;
  if (call.collective == Collective::allgather) {
    plan->shape = Shape::gather_blocks;
    plan->input = here ? static_cast<const char*>(call.recvbuf) + recv_bytes * static_cast<std::size_t>(plan->rank)
                       : call.sendbuf;
    plan->input_where = here ? &call.recv_where : &call.send_where;
    plan->input_bytes = recv_bytes;
  } else {
    plan->shape = Shape::exchange_blocks;
    plan->input = call.sendbuf;
    plan->input_where = &call.send_where;
    plan->input_bytes = all_blocks;
  }
  return true;
}

bool plan_of(const CollectiveCall& call, Plan* plan, std::string* why_not) {
  const RealMpi& mpi = real_mpi();
  if (mpi.Comm_rank(call.comm, &plan->rank) != MPI_SUCCESS || mpi.Comm_size(call.comm, &plan->size) != MPI_SUCCESS) {
    *why_not = "the communicator's rank could not be had";
    return false;
  }
  plan->root = call.root;
  return is_reduction(call.collective) ? plan_reduction(call, plan, why_not) : plan_copies(call, plan, why_not);
}

// The buffer's bytes lie in one device allocation of `context`.
static bool on_device_in(const void* pointer, std::size_t bytes, const memory::PointerInfo& where, void* context) {
  const auto first = reinterpret_cast<std::uintptr_t>(pointer);
  return memory::is_device(where) && where.context == context && first >= where.base &&
         first + bytes <= where.base + where.size;
}

void* context_of_plan(const Plan& plan) {
  const memory::PointerInfo* where = plan.output != nullptr ? plan.output_where : plan.input_where;
  return where != nullptr ? where->context : nullptr;
}

bool buffers_on_device(const Plan& plan, std::string* why_not) {
  void* context = context_of_plan(plan);
  if ((plan.input != nullptr && !on_device_in(plan.input, plan.input_bytes, *plan.input_where, context)) ||
      (plan.output != nullptr && !on_device_in(plan.output, plan.output_bytes, *plan.output_where, context))) {
    *why_not = "buffers not all in one GPU's device memory";
    return false;
  }
  if ((plan.input == nullptr || plan.input_bytes == 0) && (plan.output == nullptr || plan.output_bytes == 0)) {
    *why_not = "no bytes";
    return false;
  }
  return true;
}

bool fits_gpu_algorithms(const CollectiveCall& call, memory::ReductionType* element, memory::ReductionOp* op,
                         std::string* why_not) {
  if ((call.collective == Collective::alltoall || call.collective == Collective::reduce_scatter_block) &&
      in_place(call.sendbuf)) {
    *why_not = "in place";
    return false;
  }
  if (!is_reduction(call.collective)) {
    return true;
  }
  if (call.send_count <= 0) {
    *why_not = "no elements";
    return false;
  }
  return reduction_element(call, element, op, why_not);
}

}  // namespace cumpi::coll
