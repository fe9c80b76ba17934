#include "common/checks.h"

#include <algorithm>
#include <cstdarg>

namespace cumpi_test {

Checks& Checks::instance() {
  static Checks checks;
  return checks;
}

std::string format(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  return text;
}

bool Checks::check(bool ok, const char* expression, const char* file, int line, const std::string& detail) {
  if (ok) {
    ++passed_;
    return true;
  }
  ++failed_;
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::lock_guard<std::mutex> lock(report_);
  std::fprintf(stderr, "FAILED [rank %d] %s: %s at %s:%d %s\n", rank, context_.c_str(), expression, file, line,
               detail.c_str());
  return false;
}

bool Checks::bytes_equal(const std::vector<unsigned char>& expected, const std::vector<unsigned char>& actual,
                         const char* what, const char* file, int line) {
  if (expected.size() != actual.size()) {
    return check(false, what, file, line,
                 format("sizes differ: expected %zu bytes, got %zu", expected.size(), actual.size()));
  }
  if (expected == actual) {  // the common case at memcmp's speed; the search below only for a report
    return check(true, what, file, line, "");
  }
  std::size_t first = expected.size();
  std::size_t last = 0;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i]) {
      first = std::min(first, i);
      last = i;
      ++wrong;
    }
  }
  if (wrong == 0) {
    return check(true, what, file, line, "");
  }
  // Where the wrong bytes lie tells a lost chunk from a stale buffer.
  return check(false, what, file, line,
               format("byte %zu of %zu: expected 0x%02x, got 0x%02x (%zu bytes wrong, the last at %zu)", first,
                      expected.size(), expected[first], actual[first], wrong, last));
}

int Checks::finish() {
  long counts[2] = {passed_.load(), failed_.load()};
  long totals[2] = {0, 0};
  MPI_Allreduce(counts, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("%ld passed, %ld failed\n", totals[0], totals[1]);
    std::fflush(stdout);
  }
  return totals[1] == 0 ? 0 : 1;
}

}  // namespace cumpi_test
