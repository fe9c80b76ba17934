// Assertions for launched tests: a failed check prints the rank and the
// test; finish() gathers all ranks' counts, prints "N passed, M failed" on
// rank 0 and returns the exit code. Checks may be made from several threads
// at once; the context is set by the main thread between their phases.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace cumpi_test {

std::string format(const char* format, ...) __attribute__((format(printf, 1, 2)));

class Checks {
 public:
  static Checks& instance();

  void set_context(std::string context) { context_ = std::move(context); }
  const std::string& context() const { return context_; }
  bool check(bool ok, const char* expression, const char* file, int line, const std::string& detail);
  bool check_equal(long long a, long long b, const char* expression, const char* file, int line,
                   const std::string& detail) {
    return check(a == b, expression, file, line, format("%s (%lld vs %lld)", detail.c_str(), a, b));
  }
  // Compares every byte; reports the first difference.
  bool bytes_equal(const std::vector<unsigned char>& expected, const std::vector<unsigned char>& actual,
                   const char* what, const char* file, int line);
  int finish();

 private:
  std::string context_;
  std::atomic<long> passed_{0};
  std::atomic<long> failed_{0};
  std::mutex report_;  // one failure's line at a time
};

}  // namespace cumpi_test

#define CHECK_TRUE(cond, ...) \
  ::cumpi_test::Checks::instance().check((cond), #cond, __FILE__, __LINE__, ::cumpi_test::format("" __VA_ARGS__))
#define CHECK_EQ(a, b, ...)                                                                                        \
  ::cumpi_test::Checks::instance().check_equal(static_cast<long long>(a), static_cast<long long>(b), #a " == " #b, \
                                               __FILE__, __LINE__, ::cumpi_test::format("" __VA_ARGS__))
#define CHECK_BYTES(expected, actual, what) \
  ::cumpi_test::Checks::instance().bytes_equal((expected), (actual), (what), __FILE__, __LINE__)
