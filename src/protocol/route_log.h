// The route of rendezvous messages, said once per peer and direction at
// info: the sender says which transport it chose for a peer, the receiver
// which one it took (and why, where it declined the sender's choice).
#pragma once

namespace cumpi::protocol {

enum class Direction { to, from };

// Called for every rendezvous message on both sides, so below CUMPI_LOG=info
// it is one relaxed load and nothing else (no lock, no allocation). At info
// and above: true when it logged, the first time for (direction, peer, route).
bool log_route_once(Direction direction, int peer, const char* route, const char* reason);

}  // namespace cumpi::protocol
