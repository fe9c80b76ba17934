// OSU-style benchmark: one-way latency (ping-pong / 2) and windowed
// bandwidth between ranks 0 and 1 for host->host, device->device,
// device->host and host->device, and Allreduce latency on host and device
// buffers. Prints a table; --csv FILE writes the same rows as CSV.
//
//   mpirun -np 2 -x LD_PRELOAD=libcumpi.so cumpi_bench [--pairs hh,dd,dh,hd]
//       [--min BYTES] [--max BYTES] [--iterations N] [--allreduce 0|1] [--csv FILE]
//       [--cuda-context 0|1]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/test_memory.h"

using cumpi_test::Buffer;
using cumpi_test::Memory;

namespace {

struct Settings {
  std::vector<std::string> pairs{"hh", "dd", "dh", "hd"};
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 64u << 20;
  long iterations = 0;  // 0: scaled with the size
  bool allreduce = true;
  bool cuda_context = false;
  std::string csv;
};

Settings parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--pairs") {
      settings.pairs.clear();
      for (std::size_t at = 0; at < value.size(); at += 3) settings.pairs.push_back(value.substr(at, 2));
    } else if (flag == "--min") {
      settings.min_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--max") {
      settings.max_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--iterations") {
      settings.iterations = std::atol(value.c_str());
    } else if (flag == "--allreduce") {
      settings.allreduce = value != "0";
    } else if (flag == "--csv") {
      settings.csv = value;
    } else if (flag == "--cuda-context") {
      settings.cuda_context = value != "0";
    }
  }
  return settings;
}

// min, min * factor, ... and max itself, so that the largest size asked for is measured.
std::vector<std::size_t> sweep(std::size_t min, std::size_t max, std::size_t factor) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = min; bytes <= max; bytes *= factor) sizes.push_back(bytes);
  if (sizes.empty() || sizes.back() != max) sizes.push_back(max);
  return sizes;
}

Memory memory_of(char letter) { return letter == 'd' ? Memory::device : Memory::host; }

long iterations_for(const Settings& settings, std::size_t bytes) {
  if (settings.iterations > 0) return settings.iterations;
  const std::size_t budget = 512u << 20;  // bytes moved per measurement, about
  return std::max<long>(20, std::min<long>(2000, static_cast<long>(budget / std::max<std::size_t>(bytes, 1))));
}

struct Row {
  std::string test;
  std::string pair;
  std::size_t bytes;
  long iterations;
  double latency_us;
  double bandwidth_gbs;
};

// One-way latency: half the round trip of `iterations` ping-pongs, after a
// tenth as many to warm up (pools, pinning, connections).
double ping_pong(Buffer& buffer, std::size_t bytes, long iterations, int rank) {
  const int count = static_cast<int>(bytes);
  const int peer = 1 - rank;
  auto round_trips = [&](long n) {
    for (long i = 0; i < n; ++i) {
      if (rank == 0) {
        MPI_Send(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
    }
  };
  round_trips(std::max<long>(2, iterations / 10));
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  round_trips(iterations);
  return (MPI_Wtime() - start) / iterations / 2;
}

// A window of nonblocking sends, one acknowledgement per window.
double bandwidth(Buffer& buffer, std::size_t bytes, long iterations, int rank) {
  const int count = static_cast<int>(bytes);
  const int window = bytes >= (4u << 20) ? 4 : 32;
  const long rounds = std::max<long>(2, iterations / window);
  std::vector<MPI_Request> requests(static_cast<std::size_t>(window));
  double start = 0;
  for (long round = -1; round < rounds; ++round) {
    if (round == 0) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    for (int w = 0; w < window; ++w) {
      if (rank == 0) {
        MPI_Isend(buffer.data(), count, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &requests[w]);
      } else {
        MPI_Irecv(buffer.data(), count, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &requests[w]);
      }
    }
    MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
    if (rank == 0) {
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(nullptr, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
  }
  const double seconds = MPI_Wtime() - start;
  return static_cast<double>(bytes) * window * rounds / seconds / 1e9;
}

double allreduce_latency(Memory memory, std::size_t bytes, long iterations) {
  const int count = static_cast<int>(bytes / sizeof(float));
  Buffer send(memory, bytes);
  Buffer recv(memory, bytes);
  std::vector<float> ones(static_cast<std::size_t>(count), 1.0f);
  send.upload(ones.data(), bytes);
  for (long warm = 0; warm < std::max<long>(2, iterations / 10); ++warm) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  return (MPI_Wtime() - start) / iterations;
}

void print_rows(const std::vector<Row>& rows, const std::string& csv) {
  std::printf("%-10s %-5s %12s %10s %14s %14s\n", "test", "pair", "bytes", "iters", "latency_us", "GB/s");
  for (const Row& row : rows) {
    std::printf("%-10s %-5s %12zu %10ld %14.3f %14.3f\n", row.test.c_str(), row.pair.c_str(), row.bytes,
                row.iterations, row.latency_us, row.bandwidth_gbs);
  }
  std::fflush(stdout);
  if (csv.empty()) return;
  FILE* file = std::fopen(csv.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", csv.c_str());
    return;
  }
  std::fprintf(file, "test,pair,bytes,iterations,latency_us,bandwidth_GBps\n");
  for (const Row& row : rows) {
    std::fprintf(file, "%s,%s,%zu,%ld,%.4f,%.4f\n", row.test.c_str(), row.pair.c_str(), row.bytes, row.iterations,
                 row.latency_us, row.bandwidth_gbs);
  }
  std::fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  bool needs_device = settings.cuda_context;
  for (const std::string& pair : settings.pairs) needs_device = needs_device || pair.find('d') != std::string::npos;
  if (needs_device) cumpi_test::init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Row> rows;
  for (const std::string& pair : settings.pairs) {
    if (rank > 1) break;
    const Memory memory = memory_of(rank == 0 ? pair[0] : pair[1]);
    for (std::size_t bytes : sweep(settings.min_bytes, settings.max_bytes, 4)) {
      Buffer buffer(memory, bytes);
      std::vector<unsigned char> fill(bytes, 1);
      buffer.fill(fill);
      const long iterations = iterations_for(settings, bytes);
      const double latency = ping_pong(buffer, bytes, iterations, rank);
      const double rate = bandwidth(buffer, bytes, iterations, rank);
      rows.push_back({"p2p", pair, bytes, iterations, latency * 1e6, rate});
    }
  }
  if (settings.allreduce) {
    for (const char* pair : {"hh", "dd"}) {
      for (std::size_t bytes : sweep(std::max<std::size_t>(settings.min_bytes, 8), settings.max_bytes, 16)) {
        const long iterations = iterations_for(settings, bytes);
        const double latency = allreduce_latency(memory_of(pair[0]), bytes, iterations);
        rows.push_back({"allreduce", pair, bytes, iterations, latency * 1e6,
                        static_cast<double>(bytes) / latency / 1e9});
      }
    }
  }
  if (rank == 0) print_rows(rows, settings.csv);
  MPI_Finalize();
  return 0;
}
