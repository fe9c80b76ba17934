#include "coll/ipc_algorithm.h"

#include <cstring>
#include <string>
#include <vector>

#include "coll/agreement.h"
#include "coll/agreement_board.h"
#include "coll/reduction_type.h"
#include "coll/staged_algorithm.h"
#include "memory/classifier.h"
#include "memory/copy_engine.h"
#include "memory/datatype_layout.h"
#include "runtime/real_mpi.h"
#include "transport/cuda_ipc/ipc_cache.h"
#include "transport/cuda_ipc/ipc_driver.h"

namespace cumpi::coll {

namespace {

bool in_place(const void* buffer) { return buffer == MPI_IN_PLACE; }

// One buffer a rank lets its peers read.
struct Exposed {
  transport::IpcExport handle;
  int present = 0;
};

// A rank's payload on the board.
struct IpcOffer {
  int world_rank = -1;
  Exposed input;   // what the peers read
  Exposed output;  // the chunked Allreduce's: the chunks this rank reduced
};
static_assert(sizeof(IpcOffer) <= AgreementBoard::kPayloadBytes, "the offer fits the board's payload");

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
  bool expose_output = false;
  memory::ReductionType element = memory::ReductionType::int32;
  memory::ReductionOp op = memory::ReductionOp::sum;
  std::size_t elements = 0;     // reductions: of one vector (a block's for Reduce_scatter_block)
  std::size_t block_bytes = 0;  // Bcast: the whole; Allgather, Alltoall: a rank's block
  int root = 0;
  int rank = 0;
  int size = 0;
};

bool is_reduction(Collective collective) {
  return collective == Collective::allreduce || collective == Collective::reduce ||
         collective == Collective::reduce_scatter_block;
}

// Bytes of `count` elements of a type whose elements lie back to back from
// the pointer on; false for any other layout.
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

// The kernels' element of a reduction's type, whose extent must be the
// element's C layout for arrays of it to be the kernels' arrays.
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

bool plan_reduction(const CollectiveCall& call, Plan* plan, std::string* why_not) {
  if (!reduction_element(call, &plan->element, &plan->op, why_not)) {
    return false;
  }
  plan->elements = static_cast<std::size_t>(call.send_count);
  const std::size_t bytes = plan->elements * memory::element_bytes(plan->element);
  const bool here = in_place(call.sendbuf);
  switch (call.collective) {
    case Collective::allreduce:
      plan->shape = !here && bytes <= kIpcOneShotMostBytes ? Shape::one_shot : Shape::chunked;
      plan->input = here ? call.recvbuf : call.sendbuf;
      plan->input_where = here ? &call.recv_where : &call.send_where;
      plan->input_bytes = bytes;
      plan->output = call.recvbuf;
      plan->output_where = &call.recv_where;
      plan->output_bytes = bytes;
      plan->expose_output = plan->shape == Shape::chunked;
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

bool plan_copies(const CollectiveCall& call, Plan* plan, std::string* why_not) {
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
bool on_device_in(const void* pointer, std::size_t bytes, const memory::PointerInfo& where, void* context) {
  const auto first = reinterpret_cast<std::uintptr_t>(pointer);
  return memory::is_device(where) && where.context == context && first >= where.base &&
         first + bytes <= where.base + where.size;
}

// The context this rank computes in: its output's, else its input's.
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
  return true;
}

bool expose(const void* pointer, const memory::PointerInfo& where, Exposed* out) {
  out->present = transport::ipc_driver().export_ipc(pointer, where, &out->handle) ? 1 : 0;
  return out->present != 0;
}

// Whether this rank reads `peer`'s buffers: only the root of a Reduce, and
// in a Bcast only the root's.
bool reads_from(const Plan& plan, int peer) {
  switch (plan.shape) {
    case Shape::root_reduces:
      return plan.rank == plan.root;
    case Shape::root_copies:
      return plan.rank != plan.root && peer == plan.root;
    default:
      return true;
  }
}

// The mapped peer buffers of one call, released when it ends.
class PeerBuffers {
 public:
  explicit PeerBuffers(int size) : inputs_(static_cast<std::size_t>(size)), outputs_(static_cast<std::size_t>(size)) {}
  ~PeerBuffers() {
    for (transport::IpcMapping* mapping : mappings_) {
      transport::ipc_cache().release(mapping);
    }
  }
  PeerBuffers(const PeerBuffers&) = delete;
  PeerBuffers& operator=(const PeerBuffers&) = delete;

  // Maps what the peers exposed that this rank reads (its own buffers as
  // they are).
  bool map(const AgreementBoard& board, const Plan& plan) {
    const memory::PointerInfo destination = plan.output != nullptr ? *plan.output_where : *plan.input_where;
    for (int peer = 0; peer < board.size(); ++peer) {
      const auto index = static_cast<std::size_t>(peer);
      if (peer == board.rank()) {
        inputs_[index] = static_cast<const char*>(plan.input);
        outputs_[index] = static_cast<const char*>(plan.output);
        continue;
      }
      if (!reads_from(plan, peer)) {
        continue;
      }
      IpcOffer offer;
      std::memcpy(&offer, board.payload_of(peer), sizeof(offer));
      if ((offer.input.present != 0 &&
           !map_one(offer, offer.input, board.pid_of(peer), destination, &inputs_[index])) ||
          (offer.output.present != 0 &&
           !map_one(offer, offer.output, board.pid_of(peer), destination, &outputs_[index]))) {
        return false;
      }
    }
    return true;
  }

  const char* input(int rank) const { return inputs_[static_cast<std::size_t>(rank)]; }
  const char* output(int rank) const { return outputs_[static_cast<std::size_t>(rank)]; }

 private:
  bool map_one(const IpcOffer& offer, const Exposed& exposed, int pid, const memory::PointerInfo& destination,
               const char** mapped) {
    transport::IpcMapping* mapping = nullptr;
    if (!transport::ipc_cache().acquire(offer.world_rank, pid, exposed.handle, destination, &mapping).is_ok()) {
      return false;
    }
    mappings_.push_back(mapping);
    *mapped = static_cast<const char*>(mapping->base) + exposed.handle.offset;
    return true;
  }

  std::vector<const char*> inputs_;
  std::vector<const char*> outputs_;
  std::vector<transport::IpcMapping*> mappings_;
};

// Copies queued together, waited for together.
class CopyRound {
 public:
  CopyRound(void* context, std::size_t most_copies) : context_(context) { tickets_.reserve(most_copies); }
  void copy(void* to, const void* from, std::size_t bytes) {
    if (bytes == 0) {
      return;
    }
    tickets_.emplace_back();
    memory::copy_engine().queue_copy(to, from, bytes, context_, true, &tickets_.back());
  }
  Status wait() {
    memory::copy_engine().flush_copies();
    Status status;
    for (memory::CopyTicket& ticket : tickets_) {
      Status waited = memory::copy_engine().wait_copy(&ticket);
      if (status.is_ok()) {
        status = std::move(waited);
      }
    }
    tickets_.clear();
    return status;
  }

 private:
  void* context_;
  std::vector<memory::CopyTicket> tickets_;  // reserved: queued tickets never move
};

Status reduce(const Plan& plan, const std::vector<const char*>& inputs, std::size_t first, std::size_t count,
              char* output, void* context) {
  const std::size_t element = memory::element_bytes(plan.element);
  memory::ReductionJob job;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    job.inputs[i] = inputs[i] + first * element;
  }
  job.input_count = static_cast<int>(inputs.size());
  job.output = output + first * element;
  job.count = count;
  job.type = plan.element;
  job.op = plan.op;
  memory::CopyTicket ticket;
  Status status = memory::copy_engine().start_reduction(job, context, &ticket);
  Status waited = memory::copy_engine().wait_copy(&ticket);
  return status.is_ok() ? waited : status;
}

// The first element of rank r's chunk of the chunked Allreduce.
std::size_t chunk_start(const Plan& plan, int rank) {
  return plan.elements * static_cast<std::size_t>(rank) / static_cast<std::size_t>(plan.size);
}

// Steps 2 and on of one call; every rank arrives at every step whatever
// happened, so that no peer waits for ever. Returns this rank's own error.
class Steps {
 public:
  Steps(AgreementBoard& board, std::uint64_t call, AgreementBoard::WaitHook hook)
      : board_(board), call_(call), hook_(std::move(hook)) {}

  // This rank's part of a step is done (with `status`); waits for the others.
  void step(const Status& status) {
    if (!status.is_ok() && own_.is_ok()) {
      own_ = status;
    }
    board_.arrive(call_, next_, own_.is_ok());
    all_ok_ = board_.wait_all(call_, next_, hook_) && all_ok_;
    ++next_;
  }
  bool failed() const { return !own_.is_ok() || !all_ok_; }
  Status outcome(Collective collective) const {
    if (!own_.is_ok()) {
      return own_;
    }
    if (!all_ok_) {
      return Status::error(StatusCode::internal, std::string("another rank failed its part of ") +
                                                     collective_name(collective) + " on the GPU (its error names it)");
    }
    return Status::ok();
  }

 private:
  AgreementBoard& board_;
  std::uint64_t call_;
  AgreementBoard::WaitHook hook_;
  unsigned next_ = 2;
  Status own_;
  bool all_ok_ = true;
};

void run_shape(const Plan& plan, const PeerBuffers& peers, void* context, Steps* steps) {
  std::vector<const char*> inputs(static_cast<std::size_t>(plan.size));
  char* output = static_cast<char*>(plan.output);
  CopyRound copies(context, static_cast<std::size_t>(plan.size));
  switch (plan.shape) {
    case Shape::one_shot:
    case Shape::root_reduces:
      for (int r = 0; r < plan.size; ++r) inputs[static_cast<std::size_t>(r)] = peers.input(r);
      steps->step(output == nullptr ? Status::ok() : reduce(plan, inputs, 0, plan.elements, output, context));
      return;
    case Shape::chunked: {
      for (int r = 0; r < plan.size; ++r) inputs[static_cast<std::size_t>(r)] = peers.input(r);
      const std::size_t first = chunk_start(plan, plan.rank);
      steps->step(reduce(plan, inputs, first, chunk_start(plan, plan.rank + 1) - first, output, context));
      const std::size_t element = memory::element_bytes(plan.element);
      for (int r = 0; r < plan.size && !steps->failed(); ++r) {
        if (r != plan.rank) {
          const std::size_t from = chunk_start(plan, r) * element;
          copies.copy(output + from, peers.output(r) + from, chunk_start(plan, r + 1) * element - from);
        }
      }
      steps->step(copies.wait());
      return;
    }
    case Shape::scatter_reduce: {
      const std::size_t block =
          plan.elements * memory::element_bytes(plan.element) * static_cast<std::size_t>(plan.rank);
      for (int r = 0; r < plan.size; ++r) inputs[static_cast<std::size_t>(r)] = peers.input(r) + block;
      steps->step(reduce(plan, inputs, 0, plan.elements, output, context));
      return;
    }
    case Shape::root_copies:
      if (output != nullptr) copies.copy(output, peers.input(plan.root), plan.block_bytes);
      steps->step(copies.wait());
      return;
    case Shape::gather_blocks:
      for (int r = 0; r < plan.size; ++r) {
        char* block = output + plan.block_bytes * static_cast<std::size_t>(r);
        if (peers.input(r) != block) copies.copy(block, peers.input(r), plan.block_bytes);
      }
      steps->step(copies.wait());
      return;
    case Shape::exchange_blocks:
      for (int r = 0; r < plan.size; ++r) {
        copies.copy(output + plan.block_bytes * static_cast<std::size_t>(r),
                    peers.input(r) + plan.block_bytes * static_cast<std::size_t>(plan.rank), plan.block_bytes);
      }
      steps->step(copies.wait());
      return;
  }
}

}  // namespace

bool IpcAlgorithm::takes(const protocol::CommContext& context, const CollectiveCall& call, std::string* why_not) const {
  if (call.request != nullptr) {
    *why_not = "a nonblocking call";
    return false;
  }
  if (context.size() > CUMPI_REDUCE_MOST_INPUTS) {
    *why_not = "more ranks than the kernels take";
    return false;
  }
  if ((call.collective == Collective::alltoall || call.collective == Collective::reduce_scatter_block) &&
      in_place(call.sendbuf)) {
    *why_not = "in place";
    return false;
  }
  if (is_reduction(call.collective)) {
    memory::ReductionType element;
    memory::ReductionOp op;
    if (call.send_count <= 0) {
      *why_not = "no elements";
      return false;
    }
    return reduction_element(call, &element, &op, why_not);
  }
  return true;
}

bool IpcAlgorithm::offer(const CollectiveCall& call, void* payload, std::string* why_not) {
  Plan plan;
  if (!plan_of(call, &plan, why_not) || !buffers_on_device(plan, why_not)) {
    return false;
  }
  if ((plan.input == nullptr || plan.input_bytes == 0) && (plan.output == nullptr || plan.output_bytes == 0)) {
    *why_not = "no bytes";
    return false;
  }
  void* context = context_of_plan(plan);
  if (is_reduction(call.collective) && !memory::copy_engine().reductions_available(context)) {
    *why_not = "the reduction kernel is not available (a build without nvcc?)";
    return false;
  }
  IpcOffer offer;
  protocol::CommContext* kept = nullptr;
  Status status;
  kept = protocol::kept_context_of(call.comm, &status);
  offer.world_rank = kept != nullptr ? kept->world_rank(plan.rank) : -1;
  if ((plan.input != nullptr && !expose(plan.input, *plan.input_where, &offer.input)) ||
      (plan.expose_output && !expose(plan.output, *plan.output_where, &offer.output))) {
    *why_not = "a buffer that cannot be exported through CUDA IPC";
    return false;
  }
  std::memcpy(payload, &offer, sizeof(offer));
  return true;
}

Status IpcAlgorithm::run(const CollectiveCall& call) {
  Plan plan;
  std::string why_not;
  if (!plan_of(call, &plan, &why_not)) {
    return Status::error(StatusCode::internal, "ipc algorithm: " + why_not);
  }
  AgreementBoard& board = *call.board;
  const AgreementBoard::WaitHook hook = polite_wait();
  PeerBuffers peers(plan.size);
  const bool mapped = peers.map(board, plan);
  board.arrive(call.agreed_call, 1, mapped);
  if (!board.wait_all(call.agreed_call, 1, hook)) {
    return staged_algorithm().run(call);  // every rank sees the failure and goes there too
  }
  Steps steps(board, call.agreed_call, hook);
  run_shape(plan, peers, context_of_plan(plan), &steps);
  return steps.outcome(call.collective);
}

IpcAlgorithm& ipc_algorithm() {
  static IpcAlgorithm* algorithm = new IpcAlgorithm();  // lives until exit
  return *algorithm;
}

}  // namespace cumpi::coll
