// The choice of a collective's algorithm: the configured algorithms in
// CUMPI_COLL's order, the first that takes the call. The choice is said
// once per communicator and collective at CUMPI_LOG=info.
#pragma once

#include <string>
#include <vector>

#include "coll/algorithm.h"

namespace cumpi::coll {

class Selection {
 public:
  // Unknown names are skipped (the configuration validated them); the
  // staged algorithm is always there, last unless named earlier.
  void configure(const std::vector<std::string>& names);
  // For tests: exactly these, in this order (the last must take every call).
  void use(std::vector<Algorithm*> algorithms) { ordered_ = std::move(algorithms); }
  const std::vector<Algorithm*>& ordered() const { return ordered_; }

  // The first algorithm that takes the call; `reasons` collects why the
  // ones before it declined ("name: why; ...").
  Algorithm& choose(const protocol::CommContext& context, const CollectiveCall& call, std::string* reasons) const;

 private:
  std::vector<Algorithm*> ordered_;
};

Selection& selection();

// Chooses for the call's communicator and runs the chosen algorithm.
Status run_collective(const CollectiveCall& call);

}  // namespace cumpi::coll
