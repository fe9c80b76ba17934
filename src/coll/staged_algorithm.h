// The staged algorithm: device -> pinned host, the MPI library's own
// collective, host -> device (coll/staged_collectives.h). Takes every call,
// and runs beside ranks that pass host buffers straight to MPI.
#pragma once

#include "coll/algorithm.h"

namespace cumpi::coll {

class StagedAlgorithm final : public Algorithm {
 public:
  const char* name() const override { return "staged"; }
  bool runs_beside_host_ranks() const override { return true; }
  bool takes(const protocol::CommContext&, const CollectiveCall&, std::string*) const override { return true; }
  Status run(const CollectiveCall& call) override;
};

StagedAlgorithm& staged_algorithm();

}  // namespace cumpi::coll
