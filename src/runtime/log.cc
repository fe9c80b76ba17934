#include "runtime/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace cumpi::log {

std::atomic<int> g_level{static_cast<int>(Level::warn)};

namespace {

std::atomic<int> g_rank{-1};

int rank_from_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) {
      return std::atoi(value);
    }
  }
  return -1;
}

const char* host_name() {
  static char name[64] = "";
  if (name[0] == '\0' && gethostname(name, sizeof(name) - 1) != 0) {
    std::strcpy(name, "?");
  }
  return name;
}

}  // namespace

void set_level(Level level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

void set_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

const char* level_name(Level level) {
  switch (level) {
    case Level::error: return "error";
    case Level::warn: return "warn";
    case Level::info: return "info";
    case Level::debug: return "debug";
  }
  return "?";
}

void write(Level level, const char* format, ...) {
  int rank = g_rank.load(std::memory_order_relaxed);
  if (rank < 0) {
    rank = rank_from_launcher();
  }
  char line[1024];
  int used = std::snprintf(line, sizeof(line), "cumpi[%d@%s] %s: ", rank, host_name(), level_name(level));
  va_list args;
  va_start(args, format);
  int body = std::vsnprintf(line + used, sizeof(line) - static_cast<size_t>(used) - 1, format, args);
  va_end(args);
  size_t length = static_cast<size_t>(used) + (body > 0 ? static_cast<size_t>(body) : 0);
  if (length > sizeof(line) - 2) {
    length = sizeof(line) - 2;
  }
  line[length++] = '\n';
  // One write per line, so that lines of concurrent ranks do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, line, length);
  (void)ignored;
}

}  // namespace cumpi::log
