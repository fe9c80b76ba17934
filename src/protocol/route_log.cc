#include "protocol/route_log.h"

#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "runtime/log.h"

namespace cumpi::protocol {

bool log_route_once(Direction direction, int peer, const char* route, const char* reason) {
  if (!log::enabled(log::Level::info)) {
    return false;
  }
  static std::mutex mutex;
  static std::set<std::tuple<Direction, int, std::string>> logged;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!logged.insert(std::make_tuple(direction, peer, std::string(route))).second) {
      return false;
    }
  }
  CUMPI_LOG(info, "rendezvous messages %s rank %d take %s%s%s", direction == Direction::to ? "to" : "from", peer, route,
            *reason == '\0' ? "" : ": ", reason);
  return true;
}

}  // namespace cumpi::protocol
