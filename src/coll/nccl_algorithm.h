// The nccl algorithm (DESIGN §5): NCCL runs the collective, on one GPU per
// rank. NCCL refuses ranks that share a GPU, so the ranks offer the UUID of
// their buffers' GPU on the agreement board and take nccl only where every
// UUID differs; otherwise the next algorithm (ipc) runs. The NCCL
// communicator is made inside the first call every rank agreed to run here
// (every rank makes that call in the same order: rank 0's unique id goes to
// the others with the MPI library's Bcast), on the GPU of that call's
// buffers, and destroyed with the communicator (MPI_Comm_free, or
// MPI_Finalize). Later calls with buffers on another GPU decline. The work
// runs on cumpi's stream of that GPU's context.
// Taken: blocking Allreduce, Reduce, Reduce_scatter_block (SUM, PROD, MIN,
// MAX on 8-, 32- and 64-bit integers, float and double), Bcast, Allgather,
// Alltoall (contiguous data); the rest declines to ipc or staged. Needs the
// CUDA driver backend (the emulation backend has no streams) and
// libnccl.so.2 at run time.
#pragma once

#include <cstdint>

#include "coll/algorithm.h"

namespace cumpi::coll {

class NcclAlgorithm final : public Algorithm {
 public:
  const char* name() const override { return "nccl"; }
  bool runs_beside_host_ranks() const override { return false; }
  bool takes(const protocol::CommContext& context, const CollectiveCall& call, std::string* why_not) const override;
  std::size_t offer_bytes() const override;
  bool offer(const CollectiveCall& call, void* payload, std::string* why_not) override;
  bool accepts(const CollectiveCall& call, std::string* why_not) const override;
  Status run(const CollectiveCall& call) override;

 private:
  // After offers showed ranks sharing a GPU: this rank stops offering while
  // its buffers stay on that GPU (declining alone is always safe).
  static void remember_shared_gpu(const CollectiveCall& call);
};

NcclAlgorithm& nccl_algorithm();

// NCCL communicators made and destroyed so far (cumpi_get_coll_info).
struct NcclCounts {
  std::uint64_t made = 0;
  std::uint64_t destroyed = 0;
};
NcclCounts nccl_counts();

}  // namespace cumpi::coll
