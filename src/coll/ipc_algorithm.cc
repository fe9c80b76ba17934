#include "coll/ipc_algorithm.h"

#include <cstring>
#include <string>
#include <vector>

#include "coll/agreement.h"
#include "coll/agreement_board.h"
#include "coll/device_plan.h"
#include "coll/reduction_type.h"
#include "coll/staged_algorithm.h"
#include "memory/classifier.h"
#include "memory/copy_engine.h"
#include "memory/datatype_layout.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "transport/cuda_ipc/ipc_cache.h"
#include "transport/cuda_ipc/ipc_driver.h"

namespace cumpi::coll {

namespace {

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

}  // namespace

std::size_t IpcAlgorithm::offer_bytes() const { return sizeof(IpcOffer); }

namespace {

// The plan as ipc runs it: a large Allreduce chunked, its chunks read from
// their reducers' outputs.
bool ipc_plan(const CollectiveCall& call, Plan* plan, std::string* why_not) {
  if (!plan_of(call, plan, why_not)) {
    return false;
  }
  if (plan->shape == Shape::one_shot && plan->output_bytes > kIpcOneShotMostBytes) {
    plan->shape = Shape::chunked;
  }
  plan->expose_output = plan->shape == Shape::chunked;
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

// Whether the call may write bytes that are its input: the chunked
// Allreduce (each rank's output is input to the others' copies, and in
// place its input too) and Reduce (in place at the root, which only the
// root knows). Every rank decides alike, from the shape. The other shapes
// need no step before their work: a rank that could not map its peers says
// so at the work's step, and every rank then takes the staged path from
// inputs as the caller gave them; one step less per call.
bool overwrites_inputs(const Plan& plan) { return plan.shape == Shape::chunked || plan.shape == Shape::root_reduces; }

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
  bool map(const AgreementBoard& board, std::size_t payload_offset, const Plan& plan) {
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
      std::memcpy(&offer, static_cast<const char*>(board.payload_of(peer)) + payload_offset, sizeof(offer));
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
  Steps(AgreementBoard& board, std::uint64_t call, unsigned first_step, AgreementBoard::WaitHook hook)
      : board_(board), call_(call), hook_(std::move(hook)), next_(first_step) {}

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
  unsigned next_;
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

// Copy collectives below CUMPI_COLL_IPC_COPY_MIN a block: a copy per peer
// costs more than the staged path there. Every rank computes the same from
// the call's matching arguments (a block's bytes are equal by MPI's rules);
// a rank configured otherwise only offers nothing, and the board sends
// every rank to the staged path.
bool block_large_enough(const CollectiveCall& call, std::string* why_not) {
  const bool by_send = call.collective == Collective::bcast;
  std::size_t block = 0;
  if (!contiguous_bytes(by_send ? call.send_type : call.recv_type, by_send ? call.send_count : call.recv_count,
                        &block)) {
    *why_not = "a datatype with gaps";
    return false;
  }
  if (block < config().coll_ipc_copy_min) {
    *why_not = "blocks under CUMPI_COLL_IPC_COPY_MIN bytes";
    return false;
  }
  return true;
}

}  // namespace

bool IpcAlgorithm::takes(const protocol::CommContext& context, const CollectiveCall& call, std::string* why_not) const {
  memory::ReductionType element;
  memory::ReductionOp op;
  if (!fits_gpu_algorithms(call, &element, &op, why_not)) {
    return false;
  }
  if (context.size() > CUMPI_REDUCE_MOST_INPUTS) {
    *why_not = "more ranks than the kernels take";
    return false;
  }
  return is_reduction(call.collective) || block_large_enough(call, why_not);
}

bool IpcAlgorithm::offer(const CollectiveCall& call, void* payload, std::string* why_not) {
  Plan plan;
  if (!ipc_plan(call, &plan, why_not) || !buffers_on_device(plan, why_not)) {
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
  if (!ipc_plan(call, &plan, &why_not)) {
    return Status::error(StatusCode::internal, "ipc algorithm: " + why_not);
  }
  AgreementBoard& board = *call.board;
  const AgreementBoard::WaitHook hook = polite_wait();
  PeerBuffers peers(plan.size);
  const bool mapped = peers.map(board, call.payload_offset, plan);
  const bool destructive = overwrites_inputs(plan);
  if (destructive) {
    board.arrive(call.agreed_call, 1, mapped);
    if (!board.wait_all(call.agreed_call, 1, hook)) {
      return staged_algorithm().run(call);  // every rank sees the failure and goes there too
    }
  }
  Steps steps(board, call.agreed_call, 2, hook);
  if (mapped) {
    run_shape(plan, peers, context_of_plan(plan), &steps);
  } else {
    steps.step(Status::error(StatusCode::internal, "a peer's buffer could not be mapped through CUDA IPC"));
  }
  if (!destructive && steps.failed()) {
    // Every input is as the caller gave it: every rank saw the failure at
    // the same step and takes the staged path, which writes every output.
    CUMPI_LOG(info, "%s on the GPU failed on some rank; taking the staged path", collective_name(call.collective));
    return staged_algorithm().run(call);
  }
  return steps.outcome(call.collective);
}

IpcAlgorithm& ipc_algorithm() {
  static IpcAlgorithm* algorithm = new IpcAlgorithm();  // lives until exit
  return *algorithm;
}

}  // namespace cumpi::coll
