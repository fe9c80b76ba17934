#include "runtime/stats.h"

#include <time.h>

#include <cstdio>

namespace cumpi::stats {

std::atomic<bool> g_enabled{false};

namespace {

struct Counters {
  std::atomic<unsigned long long> calls{0};
  std::atomic<unsigned long long> bytes{0};
  std::atomic<unsigned long long> nanoseconds{0};
};

Counters g_counters[static_cast<int>(Route::count_)];

Counters& counters(Route route) { return g_counters[static_cast<int>(route)]; }

void append_row(std::string& out, int rank, const char* name, unsigned long long calls, unsigned long long bytes,
                double seconds) {
  char row[160];
  std::snprintf(row, sizeof(row), "cumpi-stats %4d  %-22s %12llu %16llu %12.6f\n", rank, name, calls, bytes, seconds);
  out += row;
}

}  // namespace

double now_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

void record(Route route, std::size_t bytes, double seconds) {
  Counters& c = counters(route);
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.bytes.fetch_add(bytes, std::memory_order_relaxed);
  c.nanoseconds.fetch_add(static_cast<unsigned long long>(seconds * 1e9), std::memory_order_relaxed);
}

std::string format_table(int rank) {
  auto calls = [](Route r) { return counters(r).calls.load(); };
  auto bytes = [](Route r) { return counters(r).bytes.load(); };
  auto seconds = [](Route r) { return 1e-9 * static_cast<double>(counters(r).nanoseconds.load()); };
  std::string out;
  char header[160];
  std::snprintf(header, sizeof(header), "cumpi-stats rank  %-22s %12s %16s %12s\n", "route", "calls", "bytes",
                "seconds");
  out += header;
  // Pass-through is what remains of all intercepted calls once the engine's
  // routes are taken out: host buffers, waits and probes on host requests.
  const Route engine_routes[] = {Route::staged_p2p, Route::ipc, Route::pipeline, Route::ucx, Route::staged_collective};
  unsigned long long engine_calls = 0;
  double engine_seconds = 0;
  for (Route r : engine_routes) {
    engine_calls += calls(r);
    engine_seconds += seconds(r);
  }
  const unsigned long long all = calls(Route::intercepted);
  append_row(out, rank, "pass-through", all > engine_calls ? all - engine_calls : 0, 0,
             seconds(Route::intercepted) > engine_seconds ? seconds(Route::intercepted) - engine_seconds : 0);
  append_row(out, rank, "eager (staged)", calls(Route::staged_p2p), bytes(Route::staged_p2p),
             seconds(Route::staged_p2p));
  append_row(out, rank, "rendezvous ipc", calls(Route::ipc), bytes(Route::ipc), seconds(Route::ipc));
  append_row(out, rank, "rendezvous pipeline", calls(Route::pipeline), bytes(Route::pipeline),
             seconds(Route::pipeline));
  append_row(out, rank, "rendezvous ucx", calls(Route::ucx), bytes(Route::ucx), seconds(Route::ucx));
  append_row(out, rank, "staged collective", calls(Route::staged_collective), bytes(Route::staged_collective),
             seconds(Route::staged_collective));
  append_row(out, rank, "  ipc copy batches", calls(Route::copy_batch), bytes(Route::copy_batch),
             seconds(Route::copy_batch));
  return out;
}

}  // namespace cumpi::stats
