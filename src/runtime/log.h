// Logging to stderr with a rank and host prefix. The level is set at run time
// (CUMPI_LOG) and checked before any formatting. Never calls MPI: the rank is
// cached at MPI_Init.
#pragma once

#include <atomic>

namespace cumpi::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

extern std::atomic<int> g_level;

inline bool enabled(Level level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void set_level(Level level);
void set_rank(int rank);  // cached once MPI is up; before that the launcher's rank variable is used
const char* level_name(Level level);

void write(Level level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace cumpi::log

#define CUMPI_LOG(level, ...)                                                  \
  do {                                                                         \
    if (::cumpi::log::enabled(::cumpi::log::Level::level)) {                   \
      ::cumpi::log::write(::cumpi::log::Level::level, __VA_ARGS__);            \
    }                                                                          \
  } while (0)
