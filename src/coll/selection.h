// The choice of a collective's algorithm: the configured algorithms in
// CUMPI_COLL's order, the first that takes the call. The choice is said
// once per communicator and collective at CUMPI_LOG=info.
#pragma once

#include <string>
#include <vector>

#include "coll/agreement_board.h"
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
  // ones before it declined ("name: why; ..."). With the communicator's
  // board (blocking calls on communicators that have one), this rank
  // announces the call there, offering the first algorithm that needs
  // every rank's buffers on a device and that it can take, and the ranks
  // agree (coll/agreement_board.h); the call then carries the board and its
  // number. Without a board such algorithms are passed over.
  Algorithm& choose(const protocol::CommContext& context, CollectiveCall* call, AgreementBoard* board,
                    std::string* reasons) const;

 private:
  std::vector<Algorithm*> ordered_;
};

Selection& selection();

// Chooses for the call's communicator and runs the chosen algorithm.
Status run_collective(CollectiveCall call);

// Calls so far, by kind of algorithm (cumpi_get_coll_info).
struct CollectiveCounts {
  std::uint64_t on_gpu = 0;  // by an algorithm every rank agreed on
  std::uint64_t staged = 0;  // by an algorithm that runs beside host ranks
};
CollectiveCounts collective_counts();

}  // namespace cumpi::coll
