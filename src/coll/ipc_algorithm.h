// The ipc algorithm (DESIGN §5): the ranks of one node, on one GPU or on
// peer GPUs, read each other's device buffers through CUDA IPC mappings and
// reduce or copy on the GPU with cumpi's kernels; the steps between are
// kept in step through the communicator's agreement board. Every rank
// writes only its own buffers:
//   Allreduce, small and not in place: each rank reduces all inputs (one shot);
//   Allreduce otherwise: rank r reduces chunk r of all inputs into its own
//     output, then copies the other chunks from their owners' outputs;
//   Reduce: the root reduces all inputs;
//   Bcast: each rank copies the root's buffer;
//   Allgather: each rank copies every rank's block;
//   Alltoall: each rank copies its block of every rank's send buffer;
//   Reduce_scatter_block: rank r reduces block r of all inputs.
// Every element is reduced in rank order, so results agree bit for bit
// on every rank. Declined (to the staged path): nonblocking calls, derived
// or unknown types, user-defined ops, in-place Alltoall and
// Reduce_scatter_block, more than CUMPI_REDUCE_MOST_INPUTS ranks.
#pragma once

#include "coll/algorithm.h"

namespace cumpi::coll {

class IpcAlgorithm final : public Algorithm {
 public:
  const char* name() const override { return "ipc"; }
  bool runs_beside_host_ranks() const override { return false; }
  bool takes(const protocol::CommContext& context, const CollectiveCall& call, std::string* why_not) const override;
  std::size_t offer_bytes() const override;
  bool offer(const CollectiveCall& call, void* payload, std::string* why_not) override;
  Status run(const CollectiveCall& call) override;
};

IpcAlgorithm& ipc_algorithm();

// Allreduce takes one shot up to this many bytes (not in place).
inline constexpr std::size_t kIpcOneShotMostBytes = 256 * 1024;

}  // namespace cumpi::coll
