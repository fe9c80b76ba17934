// Collectives on device buffers, every algorithm in one run: the latency of
// MPI_Allreduce (MPI_FLOAT, MPI_SUM), MPI_Bcast, MPI_Allgather and MPI_Reduce,
// and of MPI_Iallreduce and MPI_Ibcast each started and waited for, from 8 bytes to --max, on device buffers with each
// of --routes (CUMPI_COLL lists, switched between with cumpi_set_coll on every rank at once: nccl, ipc, staged, or
// "default" for the configured list, "hierarchy" for it with Allreduce and Bcast in steps across nodes), and on host
// buffers (route "host": the MPI library's own; "host_hierarchy": in steps) beside them. A route
// names what is asked for: where it declines a call (ipc below CUMPI_COLL_IPC_COPY_MIN, nccl on a shared GPU), the next
// algorithm runs. Prints a table (the slowest rank's time per call); --csv FILE writes it.
//
//   mpirun -np 4 -x LD_PRELOAD=libcumpi.so coll_bench [--max BYTES] [--factor F]
//       [--collectives allreduce,bcast,allgather,reduce,iallreduce,ibcast] [--routes ipc,staged,host]
//       [--iterations N] [--csv FILE]
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/test_memory.h"

using cumpi_test::Buffer;
using cumpi_test::Memory;

namespace {

struct Settings {
  std::size_t max_bytes = 256u << 20;
  std::size_t factor = 4;
  std::vector<std::string> collectives{"allreduce", "bcast", "allgather", "reduce", "iallreduce"};
  std::vector<std::string> routes{"ipc", "staged", "host"};
  std::string csv;
  long iterations = 0;  // 0: scaled with the size
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = text.find(',', from);
    parts.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return parts;
}

Settings parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--max")
      settings.max_bytes = std::strtoull(value, nullptr, 10);
    else if (flag == "--factor")
      settings.factor = std::max<std::size_t>(2, std::strtoull(value, nullptr, 10));
    else if (flag == "--collectives")
      settings.collectives = split(value);
    else if (flag == "--routes")
      settings.routes = split(value);
    else if (flag == "--iterations")
      settings.iterations = std::strtol(value, nullptr, 10);
    else if (flag == "--csv")
      settings.csv = value;
  }
  const std::vector<std::string> known{"allreduce", "bcast", "allgather", "reduce", "iallreduce", "ibcast"};
  for (const std::string& collective : settings.collectives) {
    if (std::find(known.begin(), known.end(), collective) == known.end()) {
      std::fprintf(stderr, "coll_bench: unknown collective %s\n", collective.c_str());
      std::exit(2);
    }
  }
  return settings;
}

// cumpi_set_coll when cumpi is there; false otherwise (no algorithm rows).
bool set_algorithms(const char* names) {
  using Function = int (*)(const char*);
  static auto* function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, "cumpi_set_coll"));
  return function != nullptr && function(names) == 0;
}

long iterations_for(const Settings& settings, std::size_t bytes) {
  if (settings.iterations > 0) return settings.iterations;
  if (bytes <= 65536) return 2000;
  if (bytes <= (1u << 20)) return 300;
  if (bytes <= (16u << 20)) return 40;
  return 8;
}

struct Row {
  std::string collective;
  std::string route;  // a CUMPI_COLL list, "default" or "host"
  std::size_t bytes;
  long iterations;
  double microseconds;
};

// Seconds per call on the slowest rank.
double time_calls(const std::function<void()>& call, long iterations) {
  for (long i = 0; i < std::max<long>(3, iterations / 10); ++i) call();
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) call();
  double mine = (MPI_Wtime() - start) / static_cast<double>(iterations);
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// `bytes` per rank's contribution (Allgather: a block; the others: the vector).
double measure(const std::string& collective, Memory memory, std::size_t bytes, int size, long iterations) {
  const int count = static_cast<int>(std::max<std::size_t>(1, bytes / sizeof(float)));
  const std::size_t gathered = collective == "allgather" ? bytes * static_cast<std::size_t>(size) : bytes;
  Buffer send(memory, bytes);
  Buffer recv(memory, gathered);
  std::vector<float> ones(static_cast<std::size_t>(count), 1.0F);
  send.upload(ones.data(), static_cast<std::size_t>(count) * sizeof(float));
  std::function<void()> call;
  if (collective == "allreduce") {
    call = [&] { MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
  } else if (collective == "reduce") {
    call = [&] { MPI_Reduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); };
  } else if (collective == "bcast") {
    call = [&] { MPI_Bcast(send.data(), count, MPI_FLOAT, 0, MPI_COMM_WORLD); };
  } else if (collective == "iallreduce") {
    call = [&] {
      MPI_Request request;
      MPI_Iallreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    };
  } else if (collective == "ibcast") {
    call = [&] {
      MPI_Request request;
      MPI_Ibcast(send.data(), count, MPI_FLOAT, 0, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    };
  } else {
    call = [&] { MPI_Allgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, MPI_COMM_WORLD); };
  }
  return time_calls(call, iterations);
}

void print(const std::vector<Row>& rows, const Settings& settings, int size) {
  const std::vector<std::string>& routes = settings.routes;
  std::printf("# %d ranks; us per call of the slowest rank; ratio = staged / %s\n", size, routes.front().c_str());
  std::printf("%-10s %12s", "collective", "bytes");
  for (const std::string& route : routes) std::printf(" %14s", (route + "_us").c_str());
  std::printf(" %8s\n", "ratio");
  FILE* out = settings.csv.empty() ? nullptr : std::fopen(settings.csv.c_str(), "w");
  if (out != nullptr) std::fprintf(out, "collective,route,ranks,bytes,iterations,microseconds\n");
  for (const Row& row : rows) {
    if (out != nullptr) {
      std::fprintf(out, "%s,%s,%d,%zu,%ld,%.3f\n", row.collective.c_str(), row.route.c_str(), size, row.bytes,
                   row.iterations, row.microseconds);
    }
    if (row.route != routes.front()) continue;
    std::printf("%-10s %12zu", row.collective.c_str(), row.bytes);
    double staged = 0;
    for (const std::string& route : routes) {
      double microseconds = 0;
      for (const Row& other : rows) {
        if (other.collective == row.collective && other.bytes == row.bytes && other.route == route) {
          microseconds = other.microseconds;
        }
      }
      if (route == "staged") staged = microseconds;
      std::printf(" %14.2f", microseconds);
    }
    std::printf(" %8.2f\n", row.microseconds > 0 ? staged / row.microseconds : 0.0);
  }
  if (out != nullptr) std::fclose(out);
}

// cumpi_set_coll_hierarchy when cumpi is there.
bool set_hierarchy(bool on) {
  using Function = int (*)(int);
  static auto* function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, "cumpi_set_coll_hierarchy"));
  return function != nullptr && function(on ? 1 : 0) == 0;
}

// Routes "hierarchy" and "host_hierarchy": the configured list, and the MPI
// library's own on host buffers, with Allreduce and Bcast in steps across
// nodes (CUMPI_COLL_HIERARCHY).
bool in_steps(const std::string& route) { return route == "hierarchy" || route == "host_hierarchy"; }
bool on_host(const std::string& route) { return route == "host" || route == "host_hierarchy"; }

// Asks cumpi for `route`'s algorithms; false where it cannot (no cumpi;
// "host" needs none).
bool use_route(const std::string& route, const char* configured) {
  const bool steps = in_steps(route);
  if (!set_hierarchy(steps) && steps) return false;
  if (on_host(route)) return true;
  return set_algorithms(route == "default" || steps ? configured : route.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  cumpi_test::init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* from_environment = std::getenv("CUMPI_COLL");
  const std::string configured = from_environment != nullptr ? from_environment : "nccl,ipc,staged";
  std::vector<Row> rows;
  for (const std::string& collective : settings.collectives) {
    for (std::size_t bytes = 8; bytes <= settings.max_bytes; bytes *= settings.factor) {
      const long iterations =
          iterations_for(settings, bytes * (collective == "allgather" ? static_cast<std::size_t>(size) : 1));
      for (const std::string& route : settings.routes) {
        const bool host = on_host(route);
        if (!use_route(route, configured.c_str())) continue;
        const double seconds = measure(collective, host ? Memory::host : Memory::device, bytes, size, iterations);
        rows.push_back({collective, route, bytes, iterations, seconds * 1e6});
        if (rank == 0) {
          std::fprintf(stderr, "measured %s %s %zu B: %.2f us\n", collective.c_str(), route.c_str(), bytes,
                       seconds * 1e6);
        }
      }
      use_route("default", configured.c_str());
    }
  }
  if (rank == 0) print(rows, settings, size);
  MPI_Finalize();
  return 0;
}
