#include "coll/nccl_algorithm.h"

#include <atomic>
#include <cstring>
#include <memory>

#include "coll/agreement.h"
#include "coll/agreement_board.h"
#include "coll/device_plan.h"
#include "coll/nccl_library.h"
#include "memory/classifier.h"
#include "memory/copy_engine.h"
#include "memory/device_memory.h"
#include "runtime/engine_lock.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi::coll {

namespace {

std::atomic<std::uint64_t> g_made{0};
std::atomic<std::uint64_t> g_destroyed{0};

constexpr const char* kStateName = "coll.nccl";

// A rank's offer: the GPU its buffers are on.
struct NcclOffer {
  unsigned char gpu_uuid[16];
};

// The NCCL communicator of one MPI communicator, made at its first nccl call.
class NcclState final : public protocol::CommState {
 public:
  ~NcclState() override {
    if (comm != nullptr) {
      nccl::destroy(comm);
      g_destroyed.fetch_add(1, std::memory_order_relaxed);
    }
  }
  nccl::Communicator* comm = nullptr;
  void* context = nullptr;  // the CUDA context it was made in
  std::string failed;       // why it could not be made; nccl is not offered again
  // The GPU this rank offered when the offers showed ranks sharing a GPU:
  // while its buffers stay there it offers nothing (agreeing on an
  // algorithm that will be declined costs a wait for every rank).
  bool shared_gpu_seen = false;
  unsigned char shared_gpu_uuid[16] = {};
};

NcclState* state_of(const protocol::CommContext& context) { return static_cast<NcclState*>(context.state(kStateName)); }

// The UUID of the GPU this rank's buffers of the call are on.
bool gpu_of_call(const CollectiveCall& call, unsigned char uuid[16]) {
  const memory::PointerInfo& where = memory::is_device(call.recv_where) ? call.recv_where : call.send_where;
  return memory::is_device(where) && memory::device_memory().device_uuid(where.device, uuid);
}

NcclState& ensure_state(protocol::CommContext& context) {
  auto* state = state_of(context);
  if (state == nullptr) {
    auto made = std::make_unique<NcclState>();
    state = made.get();
    context.set_state(kStateName, std::move(made));
  }
  return *state;
}

// Made by rank 0, sent to every rank with whether it could be made.
struct SharedId {
  nccl::UniqueId id;
  int made = 0;
};

Status make_communicator(const CollectiveCall& call, const Plan& plan, NcclState* state) {
  SharedId shared{};
  Status status;
  if (plan.rank == 0) {
    status = nccl::unique_id(&shared.id);
    shared.made = status.is_ok() ? 1 : 0;
  }
  const int rc =
      runtime::with_engine_released([&] { return real_mpi().Bcast(&shared, sizeof(shared), MPI_BYTE, 0, call.comm); });
  if (rc != MPI_SUCCESS) {
    return Status::mpi(rc);
  }
  if (shared.made == 0) {
    return status.is_ok() ? Status::error(StatusCode::nccl_error, "ncclGetUniqueId failed on rank 0") : status;
  }
  void* context = context_of_plan(plan);
  memory::CopyTicket ticket;
  // ncclCommInitRank takes the GPU of the current context.
  status = memory::copy_engine().start_on_stream(
      context, [&](void*) { return nccl::init(shared.id, plan.size, plan.rank, &state->comm); }, &ticket);
  Status waited = memory::copy_engine().wait_copy(&ticket);
  if (status.is_ok() && !waited.is_ok()) {
    status = std::move(waited);
  }
  if (!status.is_ok()) {
    state->failed = status.message();
    return status;
  }
  state->context = context;
  g_made.fetch_add(1, std::memory_order_relaxed);
  CUMPI_LOG(info, "NCCL %s communicator of %d ranks made", nccl::version().c_str(), plan.size);
  return Status::ok();
}

Status enqueue(const CollectiveCall& call, const Plan& plan, nccl::Communicator* comm, void* stream) {
  switch (call.collective) {
    case Collective::allreduce:
      return nccl::all_reduce(plan.input, plan.output, plan.elements, plan.element, plan.op, comm, stream);
    case Collective::reduce:
      return nccl::reduce(plan.input, plan.output != nullptr ? plan.output : const_cast<void*>(plan.input),
                          plan.elements, plan.element, plan.op, call.root, comm, stream);
    case Collective::bcast:
      return nccl::broadcast(call.recvbuf, call.recvbuf, plan.block_bytes, call.root, comm, stream);
    case Collective::allgather:
      return nccl::all_gather(plan.input, plan.output, plan.block_bytes, comm, stream);
    case Collective::alltoall:
      return nccl::all_to_all(plan.input, plan.output, plan.block_bytes, plan.size, comm, stream);
    case Collective::reduce_scatter_block:
      return nccl::reduce_scatter(plan.input, plan.output, plan.elements, plan.element, plan.op, comm, stream);
    case Collective::count:
      break;
  }
  return Status::error(StatusCode::internal, "nccl: no such collective");
}

}  // namespace

bool NcclAlgorithm::takes(const protocol::CommContext& context, const CollectiveCall& call,
                          std::string* why_not) const {
  memory::ReductionType element;
  memory::ReductionOp op;
  if (!fits_gpu_algorithms(call, &element, &op, why_not)) {
    return false;
  }
  if (!memory::copy_engine().has_streams()) {
    *why_not = "no CUDA streams (the emulation backend)";
    return false;
  }
  if (const NcclState* state = state_of(context); state != nullptr && !state->failed.empty()) {
    *why_not = "its NCCL communicator could not be made: " + state->failed;
    return false;
  }
  if (is_reduction(call.collective) && !nccl::reduces(element, op)) {
    *why_not = "a type or op NCCL does not reduce";
    return false;
  }
  return nccl::available(why_not);
}

std::size_t NcclAlgorithm::offer_bytes() const { return sizeof(NcclOffer); }

bool NcclAlgorithm::offer(const CollectiveCall& call, void* payload, std::string* why_not) {
  NcclOffer offer{};
  if (!gpu_of_call(call, offer.gpu_uuid)) {
    *why_not = "the GPU's UUID could not be had";
    return false;
  }
  Status status;
  const protocol::CommContext* context = protocol::kept_context_of(call.comm, &status);
  const NcclState* state = context != nullptr ? state_of(*context) : nullptr;
  if (state != nullptr && state->shared_gpu_seen &&
      std::memcmp(state->shared_gpu_uuid, offer.gpu_uuid, sizeof(offer.gpu_uuid)) == 0) {
    *why_not = "ranks share a GPU (NCCL takes one GPU per rank; seen at an earlier call)";
    return false;
  }
  Plan plan;
  if (!plan_of(call, &plan, why_not) || !buffers_on_device(plan, why_not)) {
    return false;
  }
  if (state != nullptr && state->comm != nullptr && state->context != context_of_plan(plan)) {
    *why_not = "buffers on another GPU than the one its NCCL communicator was made on";
    return false;
  }
  std::memcpy(payload, &offer, sizeof(offer));
  return true;
}

void NcclAlgorithm::remember_shared_gpu(const CollectiveCall& call) {
  Status status;
  protocol::CommContext* context = protocol::kept_context_of(call.comm, &status);
  if (context == nullptr) {
    return;
  }
  NcclState& state = ensure_state(*context);
  NcclOffer own;
  std::memcpy(&own, static_cast<const char*>(call.board->payload_of(call.board->rank())) + call.payload_offset,
              sizeof(own));
  std::memcpy(state.shared_gpu_uuid, own.gpu_uuid, sizeof(own.gpu_uuid));
  state.shared_gpu_seen = true;
}

bool NcclAlgorithm::accepts(const CollectiveCall& call, std::string* why_not) const {
  const AgreementBoard& board = *call.board;
  for (int r = 0; r < board.size(); ++r) {
    NcclOffer mine;
    std::memcpy(&mine, static_cast<const char*>(board.payload_of(r)) + call.payload_offset, sizeof(mine));
    for (int s = r + 1; s < board.size(); ++s) {
      NcclOffer theirs;
      std::memcpy(&theirs, static_cast<const char*>(board.payload_of(s)) + call.payload_offset, sizeof(theirs));
      if (std::memcmp(mine.gpu_uuid, theirs.gpu_uuid, sizeof(mine.gpu_uuid)) == 0) {
        remember_shared_gpu(call);
        *why_not = "ranks share a GPU (NCCL takes one GPU per rank)";
        return false;
      }
    }
  }
  return true;
}

Status NcclAlgorithm::run(const CollectiveCall& call) {
  Plan plan;
  std::string why_not;
  if (!plan_of(call, &plan, &why_not)) {
    return Status::error(StatusCode::internal, "nccl algorithm: " + why_not);
  }
  // Every rank leaves the agreement before any can be past the call (a
  // Bcast's root may finish before the others started).
  call.board->arrive(call.agreed_call, 1, true);
  call.board->wait_all(call.agreed_call, 1, polite_wait());
  Status status;
  protocol::CommContext* context = protocol::kept_context_of(call.comm, &status);
  if (context == nullptr) {
    return status;
  }
  NcclState* state = &ensure_state(*context);
  if (state->comm == nullptr) {
    status = make_communicator(call, plan, state);
    if (!status.is_ok()) {
      return status;
    }
  }
  memory::CopyTicket ticket;
  status = memory::copy_engine().start_on_stream(
      state->context, [&](void* stream) { return enqueue(call, plan, state->comm, stream); }, &ticket);
  Status waited = memory::copy_engine().wait_copy(&ticket);
  return status.is_ok() ? waited : status;
}

NcclAlgorithm& nccl_algorithm() {
  static NcclAlgorithm* algorithm = new NcclAlgorithm();  // lives until exit
  return *algorithm;
}

NcclCounts nccl_counts() {
  return NcclCounts{g_made.load(std::memory_order_relaxed), g_destroyed.load(std::memory_order_relaxed)};
}

}  // namespace cumpi::coll
