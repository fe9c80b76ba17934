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

constexpr int kSides = 3;
Counters g_counters[static_cast<int>(Route::count_)][kSides];

Counters& counters(Route route, Side side = Side::none) {
  return g_counters[static_cast<int>(route)][static_cast<int>(side)];
}

void append_row(std::string& out, int rank, const char* name, unsigned long long calls, unsigned long long bytes,
                double seconds) {
  char row[160];
  std::snprintf(row, sizeof(row), "cumpi-stats %4d  %-28s %12llu %16llu %12.6f\n", rank, name, calls, bytes, seconds);
  out += row;
}

}  // namespace

double now_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

void record(Route route, std::size_t bytes, double seconds, Side side) {
  Counters& c = counters(route, side);
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.bytes.fetch_add(bytes, std::memory_order_relaxed);
  c.nanoseconds.fetch_add(static_cast<unsigned long long>(seconds * 1e9), std::memory_order_relaxed);
}

std::string format_table(int rank) {
  // A route's figures over both sides.
  auto calls = [](Route r) {
    return counters(r).calls.load() + counters(r, Side::sent).calls.load() + counters(r, Side::received).calls.load();
  };
  auto seconds = [](Route r) {
    const unsigned long long ns = counters(r).nanoseconds.load() + counters(r, Side::sent).nanoseconds.load() +
                                  counters(r, Side::received).nanoseconds.load();
    return 1e-9 * static_cast<double>(ns);
  };
  std::string out;
  auto row = [&](const char* name, Route r, Side side = Side::none) {
    const Counters& c = counters(r, side);
    append_row(out, rank, name, c.calls.load(), c.bytes.load(), 1e-9 * static_cast<double>(c.nanoseconds.load()));
  };
  char header[160];
  std::snprintf(header, sizeof(header), "cumpi-stats rank  %-28s %12s %16s %12s\n", "route", "calls", "bytes",
                "seconds");
  out += header;
  // Pass-through is what remains of all intercepted calls once the engine's
  // routes are taken out: host buffers, waits and probes on host requests.
  // Its bytes are those the calls name in host memory (call_bytes.h).
  const Route engine_routes[] = {Route::staged_p2p, Route::ipc, Route::pipeline, Route::ucx, Route::staged_collective};
  unsigned long long engine_calls = 0;
  double engine_seconds = 0;
  for (Route r : engine_routes) {
    engine_calls += calls(r);
    engine_seconds += seconds(r);
  }
  const unsigned long long all = calls(Route::intercepted);
  append_row(out, rank, "pass-through", all > engine_calls ? all - engine_calls : 0,
             counters(Route::intercepted).bytes.load(),
             seconds(Route::intercepted) > engine_seconds ? seconds(Route::intercepted) - engine_seconds : 0);
  row("eager (staged)", Route::staged_p2p);
  row("rendezvous ipc sent", Route::ipc, Side::sent);
  row("rendezvous ipc received", Route::ipc, Side::received);
  row("rendezvous pipeline sent", Route::pipeline, Side::sent);
  row("rendezvous pipeline received", Route::pipeline, Side::received);
  row("rendezvous ucx sent", Route::ucx, Side::sent);
  row("rendezvous ucx received", Route::ucx, Side::received);
  row("staged collective", Route::staged_collective);
  row("  ipc copy batches", Route::copy_batch);
  return out;
}

}  // namespace cumpi::stats
