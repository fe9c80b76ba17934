#include "protocol/route_log.h"

#include <mutex>
#include <set>
#include <tuple>

#include "runtime/log.h"

namespace cumpi::protocol {

bool log_route_once(Direction direction, int peer, const std::string& route, const std::string& reason) {
  static std::mutex mutex;
  static std::set<std::tuple<Direction, int, std::string>> logged;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!logged.emplace(direction, peer, route).second) {
      return false;
    }
  }
  CUMPI_LOG(info, "rendezvous messages %s rank %d take %s%s%s", direction == Direction::to ? "to" : "from", peer,
            route.c_str(), reason.empty() ? "" : ": ", reason.c_str());
  return true;
}

}  // namespace cumpi::protocol
