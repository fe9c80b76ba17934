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
  // Exactly these, in this order (the last must take every call); tests
  // use it directly.
  void use(std::vector<Algorithm*> algorithms);
  const std::vector<Algorithm*>& ordered() const { return ordered_; }

  // The first algorithm that takes the call; `reasons` (may be null)
  // collects why the ones before it declined ("name: why; ..."). With the communicator's
  // board (blocking calls on communicators that have one), this rank
  // announces the call there, offering every algorithm that needs every
  // rank's buffers on a device and that it can take (each writes its offer
  // into its own region of the payload), and the ranks agree
  // (coll/agreement_board.h): the first algorithm every rank offered whose
  // offers together allow it (Algorithm::accepts) runs; the call then
  // carries the board, its number and the algorithm's region. Without a
  // board such algorithms are passed over.
  Algorithm& choose(const protocol::CommContext& context, CollectiveCall* call, AgreementBoard* board,
                    std::string* reasons) const;

 private:
  std::vector<Algorithm*> ordered_;
  std::vector<std::size_t> offsets_;  // of each algorithm's offer in the board's payload
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
