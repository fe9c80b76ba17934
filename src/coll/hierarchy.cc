#include "coll/hierarchy.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "coll/agreement.h"
#include "coll/selection.h"
#include "memory/classifier.h"
#include "memory/device_memory.h"
#include "memory/device_scratch.h"
#include "memory/staged_buffer.h"
#include "protocol/node_map.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"

namespace cumpi::coll {

namespace {

constexpr const char* kStateName = "coll.hierarchy";
std::atomic<std::uint64_t> g_calls{0};

// The communicators of the steps, made at the first call in steps on a
// communicator, which every rank of it makes (the choice is the same on
// every rank), and freed with it.
class HierarchyState final : public protocol::CommState {
 public:
  ~HierarchyState() override {
    for (MPI_Comm* comm : {&node, &leaders}) {
      if (*comm != MPI_COMM_NULL) {
        real_mpi().Comm_free(comm);
      }
    }
    for (auto& [root, comm] : representatives) {
      if (comm != MPI_COMM_NULL) {
        real_mpi().Comm_free(&comm);
      }
    }
  }
  int rank = -1;
  MPI_Comm node = MPI_COMM_NULL;     // this rank's node's ranks of the communicator, in rank order
  int node_size = 0;
  MPI_Comm leaders = MPI_COMM_NULL;  // the lowest rank of every node, in rank order; null on the others
  // By a root that does not lead its node: that root and the other nodes'
  // leaders, in node order (null where this rank is none of them).
  std::map<int, MPI_Comm> representatives;
  std::vector<int> local_rank;       // each rank's, on its node's communicator
  std::vector<int> node_index;       // each rank's node, numbered as the leaders are ranked in `leaders`
  bool equal_blocks = false;         // HierarchyLayout's
  bool said[static_cast<unsigned>(Collective::count)] = {};  // the choice logged, by collective
};

// Where every rank of the communicator is, from the job's node map.
void learn_layout(const protocol::CommContext& context, HierarchyState* state) {
  std::vector<int> nodes(static_cast<std::size_t>(context.size()));
  for (std::size_t rank = 0; rank < nodes.size(); ++rank) {
    nodes[rank] = protocol::node_of(context.world_rank(static_cast<int>(rank)));
  }
  HierarchyLayout layout = layout_of(nodes);
  const auto own = static_cast<std::size_t>(state->rank);
  state->node_size = layout.node_sizes[static_cast<std::size_t>(layout.node_index[own])];
  state->local_rank = std::move(layout.local_rank);
  state->node_index = std::move(layout.node_index);
  state->equal_blocks = layout.equal_blocks;
}

// A step's MPI calls are on a communicator of cumpi's own, which returns
// errors: the MPI library's error is reported through the user's
// communicator by the call that took the steps.
Status to_report_on_user_comm(Status status) {
  if (status.code() != StatusCode::mpi_error) {
    return status;
  }
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  real_mpi().Error_string(status.mpi_code(), text, &length);
  return Status::mpi_returned(status.mpi_code(), std::string("a step across nodes failed: ") + text);
}

Status split(MPI_Comm comm, int color, int key, MPI_Comm* made) {
  const int rc = real_mpi().Comm_split(comm, color, key, made);
  if (rc != MPI_SUCCESS) {
    return Status::mpi(rc);
  }
  // A step's error comes back to the user's call, reported through the
  // user's communicator's handler.
  if (*made != MPI_COMM_NULL) {
    real_mpi().Comm_set_errhandler(*made, MPI_ERRORS_RETURN);
  }
  return Status::ok();
}

// The layout of the communicator's ranks, learnt at its first call that
// may go in steps (local: no collective call); null with the error where it
// could not be had.
HierarchyState* state_of(protocol::CommContext& context, MPI_Comm comm, Status* status) {
  if (auto* state = static_cast<HierarchyState*>(context.state(kStateName))) {
    return state;
  }
  auto state = std::make_unique<HierarchyState>();
  const int rc = real_mpi().Comm_rank(comm, &state->rank);
  if (rc != MPI_SUCCESS) {
    *status = Status::mpi(rc);
    return nullptr;
  }
  learn_layout(context, state.get());
  HierarchyState* made = state.get();
  context.set_state(kStateName, std::move(state));
  return made;
}

// The communicators of the steps, made by the communicator's first call in
// steps, which every rank of it makes.
Status make_step_comms(MPI_Comm comm, HierarchyState* state) {
  if (state->node != MPI_COMM_NULL) {
    return Status::ok();
  }
  const auto own = static_cast<std::size_t>(state->rank);
  Status status = split(comm, state->node_index[own], state->rank, &state->node);
  if (status.is_ok()) {
    status = split(comm, state->local_rank[own] == 0 ? 0 : MPI_UNDEFINED, state->rank, &state->leaders);
  }
  CUMPI_LOG(debug, "hierarchy of a communicator: %d ranks on this node, %s", state->node_size,
            state->leaders != MPI_COMM_NULL ? "its leader" : "not its leader");
  return status;
}

// An Allgather of one or more bytes per rank whose whole receive count
// fits an int (the last step broadcasts it). A rank's receive signature is
// the same on every rank; its send side may be MPI_IN_PLACE.
bool allgather_fits(const protocol::CommContext& context, const CollectiveCall& call) {
  int type_bytes = 0;
  if (call.recv_count <= 0 || real_mpi().Type_size(call.recv_type, &type_bytes) != MPI_SUCCESS || type_bytes <= 0) {
    return false;
  }
  return static_cast<long long>(call.recv_count) * context.size() <= std::numeric_limits<int>::max();
}

// Whether a call that may_go_in_steps does, from what every rank shares
// only: the communicator's nodes and the call's matching arguments. The MPI library
// reports bad arguments (declined here) in its own call.
bool takes(const protocol::CommContext& context, const CollectiveCall& call) {
  if (context.inter() || context.nodes() < 2 || context.nodes() >= context.size()) {
    return false;
  }
  if (call.collective == Collective::allgather) {
    return allgather_fits(context, call);
  }
  const MPI_Datatype type = call.send_type;
  int type_bytes = 0;
  if (call.send_count <= 0 || real_mpi().Type_size(type, &type_bytes) != MPI_SUCCESS || type_bytes <= 0) {
    return false;  // nothing to move (the bytes of a signature are the same on every rank), or a bad type
  }
  if (call.collective != Collective::allreduce && (call.root < 0 || call.root >= context.size())) {
    return false;
  }
  if (call.collective == Collective::bcast) {
    return true;
  }
  // Steps reduce in another order than the ranks', so only where the op
  // allows any.
  int commutative = 0;
  return real_mpi().Op_commutative(call.op, &commutative) == MPI_SUCCESS && commutative != 0;
}

void log_once(const protocol::CommContext& context, const CollectiveCall& call, HierarchyState* state) {
  bool& said = state->said[static_cast<unsigned>(call.collective)];
  if (said || !log::enabled(log::Level::info)) {
    return;
  }
  said = true;
  CUMPI_LOG(info,
            "%s on a communicator of %d ranks on %d nodes takes the hierarchy: steps within each node (this "
            "one %d ranks) and between one rank per node",
            collective_name(call.collective), context.size(), context.nodes(), state->node_size);
}

// One step on a communicator of the hierarchy: a call of the seam there.
// Host buffers announce themselves and go to the MPI library, as the entry
// points send them; device buffers choose their algorithm on that
// communicator (ipc within a node, staged between the leaders).
Status run_step(const CollectiveCall& step) {
  if (memory::is_device(step.send_where) || memory::is_device(step.recv_where)) {
    return to_report_on_user_comm(run_collective(step));
  }
  announce_host_call(step.comm, true);
  const int rc = runtime::with_engine_released([&] {
    switch (step.collective) {
      case Collective::reduce:
        return real_mpi().Reduce(step.sendbuf, step.recvbuf, step.send_count, step.send_type, step.op, step.root,
                                 step.comm);
      case Collective::allreduce:
        return real_mpi().Allreduce(step.sendbuf, step.recvbuf, step.send_count, step.send_type, step.op,
                                    step.comm);
      case Collective::allgather:
        return real_mpi().Allgather(step.sendbuf, step.send_count, step.send_type, step.recvbuf, step.recv_count,
                                    step.recv_type, step.comm);
      default:
        return real_mpi().Bcast(step.recvbuf, step.send_count, step.send_type, step.root, step.comm);
    }
  });
  return to_report_on_user_comm(from_mpi(rc));
}

// Reduce to each node's leader, Allreduce among the leaders in place,
// Bcast from each node's leader: every rank ends with the leaders' result.
Status allreduce_in_steps(const CollectiveCall& call, const HierarchyState& state) {
  const bool leader = state.leaders != MPI_COMM_NULL;
  const bool in_place = call.sendbuf == MPI_IN_PLACE;
  if (state.node_size > 1) {
    CollectiveCall within = call;
    within.collective = Collective::reduce;
    within.comm = state.node;
    within.root = 0;
    if (in_place && !leader) {
      // A rank's input is in its receive buffer, which MPI_Reduce ignores
      // off the root.
      within.sendbuf = call.recvbuf;
      within.send_where = call.recv_where;
      within.recvbuf = nullptr;
      within.recv_where = memory::kHostMemory;
    }
    Status status = run_step(within);
    if (!status.is_ok()) {
      return status;
    }
  }
  if (leader) {
    CollectiveCall between = call;
    between.comm = state.leaders;
    between.sendbuf = state.node_size > 1 || in_place ? MPI_IN_PLACE : call.sendbuf;
    between.send_where = between.sendbuf == MPI_IN_PLACE ? memory::kHostMemory : call.send_where;
    Status status = run_step(between);
    if (!status.is_ok()) {
      return status;
    }
  }
  if (state.node_size == 1) {
    return Status::ok();
  }
  CollectiveCall back = call;
  back.collective = Collective::bcast;
  back.comm = state.node;
  back.root = 0;
  back.sendbuf = nullptr;
  back.send_where = memory::kHostMemory;
  return run_step(back);
}

// The communicator of one rank per node for a call with this root: the
// root for its node, the leader for every other (`leaders` where the root
// leads its node), ranked by node; made at the first such call, which every
// rank makes. Null where this rank is none of them.
Status representatives_of(MPI_Comm comm, int root, HierarchyState* state, MPI_Comm* made) {
  const auto own = static_cast<std::size_t>(state->rank);
  const auto root_at = static_cast<std::size_t>(root);
  if (state->local_rank[root_at] == 0) {
    *made = state->leaders;
    return Status::ok();
  }
  if (auto found = state->representatives.find(root); found != state->representatives.end()) {
    *made = found->second;
    return Status::ok();
  }
  const bool roots_node = state->node_index[own] == state->node_index[root_at];
  const bool represents = roots_node ? state->rank == root : state->local_rank[own] == 0;
  Status status = split(comm, represents ? 0 : MPI_UNDEFINED, state->node_index[own], made);
  if (status.is_ok()) {
    state->representatives[root] = *made;
  }
  return status;
}

// This rank's node's representative for a call with this root, as a rank
// of `node`.
int node_root(const HierarchyState& state, int root) {
  const auto root_at = static_cast<std::size_t>(root);
  const bool roots_node = state.node_index[static_cast<std::size_t>(state.rank)] == state.node_index[root_at];
  return roots_node ? state.local_rank[root_at] : 0;
}

// Bcast among the nodes' representatives from the root, then within every
// node from its representative.
Status bcast_in_steps(const CollectiveCall& call, HierarchyState* state) {
  MPI_Comm representatives = MPI_COMM_NULL;
  Status status = representatives_of(call.comm, call.root, state, &representatives);
  if (!status.is_ok()) {
    return status;
  }
  CollectiveCall step = call;
  if (representatives != MPI_COMM_NULL) {
    step.comm = representatives;
    step.root = state->node_index[static_cast<std::size_t>(call.root)];
    status = run_step(step);
    if (!status.is_ok() || state->node_size == 1) {
      return status;
    }
  }
  step.comm = state->node;
  step.root = node_root(*state, call.root);
  return run_step(step);
}

// Room for `count` elements of `type` (any lower bound and extent), host
// memory or scratch device memory in the context of `like`.
class PartialResult {
 public:
  Status make(int count, MPI_Datatype type, const memory::PointerInfo& like) {
    memory::TypeLayout layout;
    memory::ByteSpan span;
    Status status = memory::span_of_call(type, count, &layout, &span);
    if (!status.is_ok()) {
      return status;
    }
    char* block = nullptr;
    if (memory::is_device(like)) {
      status = device_.acquire(span.bytes, like);
      if (!status.is_ok()) {
        return status;
      }
      block = static_cast<char*>(device_.device());
    } else {
      host_.resize(span.bytes);
      block = host_.data();
    }
    data_ = block - span.offset;
    where_ = memory::is_device(like) ? memory::device_memory().query(block) : memory::kHostMemory;
    return Status::ok();
  }
  void* data() const { return data_; }
  const memory::PointerInfo& where() const { return where_; }

 private:
  memory::ScratchLease device_;
  std::vector<char> host_;
  char* data_ = nullptr;
  memory::PointerInfo where_;
};

// Reduce within each node to its representative, then among the
// representatives to the root. A representative other than the root holds
// its node's partial result in memory of cumpi's own, on the device where
// its input is.
Status reduce_in_steps(const CollectiveCall& call, HierarchyState* state) {
  MPI_Comm representatives = MPI_COMM_NULL;
  Status status = representatives_of(call.comm, call.root, state, &representatives);
  if (!status.is_ok()) {
    return status;
  }
  const bool is_root = state->rank == call.root;
  const bool in_place = call.sendbuf == MPI_IN_PLACE;  // only the root may pass it
  const void* input = in_place ? call.recvbuf : call.sendbuf;
  const memory::PointerInfo& input_where = in_place ? call.recv_where : call.send_where;
  PartialResult partial;
  const void* node_result = input;  // what this rank takes to the representatives
  memory::PointerInfo node_result_where = input_where;
  if (state->node_size > 1) {
    CollectiveCall within = call;
    within.comm = state->node;
    within.root = node_root(*state, call.root);
    if (representatives != MPI_COMM_NULL && !is_root) {
      status = partial.make(call.send_count, call.send_type, input_where);
      if (!status.is_ok()) {
        return status;
      }
      within.recvbuf = partial.data();
      within.recv_where = partial.where();
      node_result = partial.data();
      node_result_where = partial.where();
    } else if (!is_root) {
      within.recvbuf = nullptr;  // ignored off the root
      within.recv_where = memory::kHostMemory;
    }
    status = run_step(within);
    if (!status.is_ok() || representatives == MPI_COMM_NULL) {
      return status;
    }
  }
  CollectiveCall between = call;
  between.comm = representatives;
  between.root = state->node_index[static_cast<std::size_t>(call.root)];
  if (is_root) {
    const bool reduced_here = state->node_size > 1 || in_place;
    between.sendbuf = reduced_here ? MPI_IN_PLACE : call.sendbuf;
    between.send_where = reduced_here ? memory::kHostMemory : call.send_where;
  } else {
    between.sendbuf = node_result;
    between.send_where = node_result_where;
    between.recvbuf = nullptr;
    between.recv_where = memory::kHostMemory;
  }
  return run_step(between);
}

// Where the ranks lie in equal blocks of consecutive ranks: Allgather
// within each node into that node's block of the receive buffer,
// Allgather in place of the nodes' blocks among the leaders, Bcast of the
// whole buffer within each node.
Status allgather_in_steps(const CollectiveCall& call, const HierarchyState& state) {
  MPI_Count lb = 0;
  MPI_Count extent = 0;
  if (const int rc = real_mpi().Type_get_extent_x(call.recv_type, &lb, &extent); rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  const int block = state.node_size * call.recv_count;  // elements of one node
  const int first = state.node_index[static_cast<std::size_t>(state.rank)] * state.node_size;
  CollectiveCall within = call;
  within.comm = state.node;
  within.recvbuf = static_cast<char*>(call.recvbuf) + static_cast<MPI_Count>(first) * call.recv_count * extent;
  Status status = run_step(within);
  if (!status.is_ok()) {
    return status;
  }
  if (state.leaders != MPI_COMM_NULL) {
    CollectiveCall between = call;
    between.comm = state.leaders;
    between.sendbuf = MPI_IN_PLACE;
    between.send_where = memory::kHostMemory;
    between.recv_count = block;
    status = run_step(between);
    if (!status.is_ok()) {
      return status;
    }
  }
  CollectiveCall back;
  back.collective = Collective::bcast;
  back.recvbuf = call.recvbuf;
  back.recv_where = call.recv_where;
  back.send_count = call.recv_count * static_cast<int>(state.node_index.size());
  back.send_type = call.recv_type;
  back.root = 0;
  back.comm = state.node;
  return run_step(back);
}

}  // namespace

HierarchyLayout layout_of(const std::vector<int>& node_of_rank) {
  HierarchyLayout layout;
  std::vector<int> nodes;  // by node_index: the node's name in the map
  for (const int node : node_of_rank) {
    std::size_t index = 0;
    while (index < nodes.size() && nodes[index] != node) {
      ++index;  // nodes are few: a scan beats a map
    }
    if (index == nodes.size()) {
      nodes.push_back(node);
      layout.node_sizes.push_back(0);
    }
    layout.node_index.push_back(static_cast<int>(index));
    layout.local_rank.push_back(layout.node_sizes[index]++);
  }
  const int block = layout.node_sizes.empty() ? 0 : layout.node_sizes[0];
  layout.equal_blocks =
      block > 0 && std::all_of(layout.node_sizes.begin(), layout.node_sizes.end(), [&](int n) { return n == block; });
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank) {
    layout.equal_blocks = layout.equal_blocks && layout.node_index[rank] == static_cast<int>(rank) / block;
  }
  return layout;
}

Status run_if_hierarchical(const CollectiveCall& call, bool* taken) {
  *taken = false;
  if (!may_go_in_steps(call)) {
    return Status::ok();
  }
  Status status;
  protocol::CommContext* context = protocol::kept_context_of(call.comm, &status);
  if (context == nullptr || !takes(*context, call)) {
    return Status::ok();  // the MPI library's own call reports a bad communicator
  }
  HierarchyState* state = state_of(*context, call.comm, &status);
  if (state != nullptr && call.collective == Collective::allgather && !state->equal_blocks) {
    return Status::ok();
  }
  *taken = true;
  if (state == nullptr || !(status = make_step_comms(call.comm, state)).is_ok()) {
    return status;
  }
  log_once(*context, call, state);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  switch (call.collective) {
    case Collective::allreduce:
      return allreduce_in_steps(call, *state);
    case Collective::bcast:
      return bcast_in_steps(call, state);
    case Collective::allgather:
      return allgather_in_steps(call, *state);
    default:
      return reduce_in_steps(call, state);
  }
}

std::uint64_t hierarchical_calls() { return g_calls.load(std::memory_order_relaxed); }

}  // namespace cumpi::coll
