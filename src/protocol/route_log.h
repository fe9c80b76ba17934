// The route of rendezvous messages, said once per peer and direction at
// info: the sender says which transport it chose for a peer, the receiver
// which one it took (and why, where it declined the sender's choice).
#pragma once

#include <string>

namespace cumpi::protocol {

enum class Direction { to, from };

// True the first time for (direction, peer, route).
bool log_route_once(Direction direction, int peer, const std::string& route, const std::string& reason);

}  // namespace cumpi::protocol
